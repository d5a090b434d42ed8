"""The tuning rules of context and expert parallelism: CP's ring exchange and EP's all-to-all,
read from a breakdown's cp_s and ep_s as TP's and DP's rules read theirs (app/core/teach/
advice.py runs them among its RULES)."""

from __future__ import annotations

from app.core.teach.advice_types import Advice, Breakdown
from app.core.teach.advice_types import share as _share

# CP's ring and EP's all-to-all are collectives as TP's and DP's are, held to the same ~30% of
# the step: past it one exchange dominates, and the compute meant to hide it no longer does.
CP_SHARE_LIMIT = 0.30
EP_SHARE_LIMIT = 0.30


def _over(b: Breakdown, seconds: float, size: int, limit: float) -> float | None:
    """An axis's share of the step when past ``limit`` on an axis of more than one rank."""
    share = _share(seconds, b.step_s)
    return share if share > limit and size > 1 else None


def _crossing(crosses: bool, keep: str, keep_zh: str) -> tuple[str, str, str, str]:
    """(where, keep, where_zh, keep_zh): the node words, said only of a group that crosses one,
    so the advice never proposes what is already so."""
    if not crosses:
        return "", "", "", ""
    return " and crosses nodes", keep, "，而且跨了节点", keep_zh


def cp_rule(b: Breakdown) -> Advice | None:
    share = _over(b, b.cp_s, b.cp, CP_SHARE_LIMIT)
    if share is None:
        return None
    # Liu et al. 2023 (Ring Attention) §3: a rank's block attention (~c² FLOPs) hides the next
    # K/V block's transfer (~c bytes) only while its slice c = seq/cp is long enough (c >= F/B).
    where, keep, where_zh, keep_zh = _crossing(
        b.cp_crosses_node, ", and keep each CP group inside one node's NVLink",
        "，并让 CP 组留在同一节点的 NVLink 内",
    )  # fmt: skip
    return Advice(
        "cp_comm",
        f"CP's ring exchange of K/V blocks is {share:.0%} of the step{where}: the attention it "
        f"runs behind no longer hides it. Use fewer CP ranks (now {b.cp}), so each holds a "
        f"longer slice of the sequence whose attention covers the exchange{keep}.",
        f"CP 环上的 K/V 交换占单步 {share:.0%}{where_zh}：注意力计算已经盖不住它。减少 CP 路数"
        f"（当前 {b.cp}），让每个 GPU 分到更长的序列片段，用它的注意力计算掩盖交换{keep_zh}。",
    )


def ep_rule(b: Breakdown) -> Advice | None:
    share = _over(b, b.ep_s, b.ep, EP_SHARE_LIMIT)
    if share is None:
        return None
    # Megatron-LM megatron/core/transformer/moe/README.md: the tokens sent grow with topk, and
    # a capacity factor caps them before the EP exchange (capacity = tokens*topk*factor/experts).
    where, keep, where_zh, keep_zh = _crossing(
        b.ep_crosses_node, "keep each EP group inside one node's NVLink; ",
        "让 EP 组留在同一节点的 NVLink 内；",
    )  # fmt: skip
    return Advice(
        "ep_comm",
        f"EP's all-to-all (token dispatch and combine over {b.ep} ranks) is {share:.0%} of the "
        f"step{where}: {keep}send fewer tokens, with fewer experts per token (top-k) or a "
        "capacity factor capping each expert's tokens (GShard); or overlap the all-to-all with "
        "another micro-batch's compute (Megatron-LM: --overlap-moe-expert-parallel-comm).",
        f"EP 的全对全（在 {b.ep} 个 GPU 间分发与合并 token）占单步 {share:.0%}{where_zh}："
        f"{keep_zh}少发 token——减少每个 token 选的专家数（top-k），或用容量因子限制每个专家"
        "收的 token（GShard）；或让全对全与另一个微批的计算重叠"
        "（Megatron-LM：--overlap-moe-expert-parallel-comm）。",
    )
