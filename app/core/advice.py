"""The article's tuning rules, as checks over a breakdown that is predicted or measured."""

from __future__ import annotations

from dataclasses import dataclass

# The article's thresholds: TP traffic above ~30% of the step means TP is too wide or crosses
# nodes; a bubble above ~20% wants more micro-batches (m >= 4p keeps it small); DP traffic
# that dominates wants gradient accumulation.
TP_SHARE_LIMIT = 0.30
BUBBLE_LIMIT = 0.20
DP_SHARE_LIMIT = 0.30


@dataclass(frozen=True)
class Breakdown:
    step_s: float
    tp_s: float  # TP collective seconds on the busiest rank
    dp_s: float  # DP gradient all-reduce seconds
    bubble_fraction: float
    memory_ratio: float  # peak bytes per GPU / capacity; > 1 is out of memory
    microbatches: int
    pp: int
    tp: int
    schedule: str
    tp_crosses_node: bool = False


@dataclass(frozen=True)
class Advice:
    rule: str
    message: str
    message_zh: str


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0


def _tp(b: Breakdown) -> Advice | None:
    share = _share(b.tp_s, b.step_s)
    if share <= TP_SHARE_LIMIT or b.tp == 1:
        return None
    where = " and crosses nodes" if b.tp_crosses_node else ""
    where_zh = "，而且跨了节点" if b.tp_crosses_node else ""
    return Advice(
        "tp_comm",
        f"TP communication is {share:.0%} of the step{where}: reduce TP (now {b.tp}) and keep "
        "each TP group inside one node's NVLink.",
        f"TP 通信占单步 {share:.0%}{where_zh}：减小 TP（当前 {b.tp}），让 TP 组留在同一节点的"
        " NVLink 内——拆得越细，工人之间传话越多。",
    )


def _bubble(b: Breakdown) -> Advice | None:
    if b.bubble_fraction <= BUBBLE_LIMIT or b.pp == 1:
        return None
    target = 4 * b.pp
    return Advice(
        "bubble",
        f"The pipeline bubble is {b.bubble_fraction:.0%}: raise micro-batches from "
        f"{b.microbatches} to at least {target} (m >= 4p), or use the interleaved schedule.",
        f"流水线气泡占 {b.bubble_fraction:.0%}：把微批数从 {b.microbatches} 提高到至少 {target}"
        "（m ≥ 4p），或改用交错（interleaved）调度，让传送带上别空着。",
    )


def _dp(b: Breakdown) -> Advice | None:
    share = _share(b.dp_s, b.step_s)
    if share <= DP_SHARE_LIMIT:
        return None
    return Advice(
        "dp_comm",
        f"The DP gradient all-reduce is {share:.0%} of the step: accumulate more micro-batches "
        "per step (gradient accumulation) so each all-reduce is amortised, or overlap it.",
        f"DP 梯度同步占单步 {share:.0%}：用梯度累积，每步多攒几个微批再同步一次，"
        "或让同步与反向计算重叠。",
    )


def _memory(b: Breakdown) -> Advice | None:
    if b.memory_ratio <= 1.0:
        return None
    return Advice(
        "oom",
        f"Peak memory is {b.memory_ratio:.0%} of HBM: turn on activation recompute, a higher "
        "ZeRO stage, or split the model further with more TP or PP.",
        f"显存峰值是容量的 {b.memory_ratio:.0%}，放不下：开启激活重计算、提高 ZeRO 阶段，"
        "或用更大的 TP/PP 把模型切得更细。",
    )


RULES = (_memory, _tp, _bubble, _dp)


def advise(b: Breakdown) -> list[Advice]:
    return [a for rule in RULES if (a := rule(b)) is not None]
