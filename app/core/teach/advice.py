"""The article's tuning rules, as checks over a breakdown that is predicted or measured (its
fields: advice_types; CP's and EP's rules: advice_axes)."""

from __future__ import annotations

from app.core.cost.predict import WhatIf  # what the advice weighs: computed by the cost model
from app.core.teach.advice_axes import CP_SHARE_LIMIT, EP_SHARE_LIMIT, cp_rule, ep_rule
from app.core.teach.advice_types import Advice, Breakdown
from app.core.teach.advice_types import share as _share

__all__ = ["CP_SHARE_LIMIT", "EP_SHARE_LIMIT", "Advice", "Breakdown", "WhatIf", "advise"]

# The article's thresholds: TP traffic above ~30% of the step means TP is too wide or crosses
# nodes; a bubble above ~20% wants more micro-batches (m >= 4p keeps it small); DP traffic
# that dominates wants gradient accumulation.
TP_SHARE_LIMIT = 0.30
BUBBLE_LIMIT = 0.20
DP_SHARE_LIMIT = 0.30
# Activations above half of the peak GPU's memory dominate it: recompute is the lever.
ACT_SHARE_LIMIT = 0.50
GIB = 1 << 30


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
    if b.microbatches < target:
        other = _other_schedule(b.schedule)
        return Advice(
            "bubble",
            f"The pipeline bubble is {b.bubble_fraction:.0%}: raise micro-batches from "
            f"{b.microbatches} to at least {target} (m >= 4p), or use {other[0]}.",
            f"流水线气泡占 {b.bubble_fraction:.0%}：把微批数从 {b.microbatches} 提高到至少 "
            f"{target}（m ≥ 4p），或改用{other[1]}，让传送带上别空着。",
        )
    # m >= 4p already (Narayanan et al. 2021 §2.2: bubble (p-1)/m): more micro-batches barely
    # help, so name what does.
    return _rebalance(b) or _reschedule(b)


def _other_schedule(current: str) -> tuple[str, str]:
    """A schedule with a smaller bubble than ``current``, never ``current`` itself."""
    if current in ("interleaved", "looped-bfs"):
        return "a zero-bubble schedule (interleaved-zb)", "零气泡调度（interleaved-zb）"
    if current in ("zb-h1", "zb-h2", "zbv", "interleaved-zb", "dualpipe", "dualpipev"):
        return "more virtual stages or DualPipeV", "更多虚拟阶段或 DualPipeV"
    return "the interleaved schedule", "交错（interleaved）调度"


def _rebalance(b: Breakdown) -> Advice | None:
    """An uneven pipeline: the slowest stage paces every other (Narayanan et al. 2021 §2.2),
    typically the last, which also runs the head (the logits GEMM grows with the vocabulary)."""
    work, layers = b.stage_work, b.stage_layers
    if len(work) < 2 or len(layers) != len(work):
        return None
    slow = work.index(max(work))
    mean = sum(work) / len(work)
    per_layer = min(w / n for w, n in zip(work, layers, strict=True) if n > 0)
    move = round((work[slow] - mean) / per_layer) if per_layer > 0 else 0
    if move < 1 or move >= layers[slow]:
        return None
    what, what_zh = _ends_of(b.stage_ends, slow)
    lead = (
        f"The pipeline bubble is {b.bubble_fraction:.0%} with m = {b.microbatches} >= 4p = "
        f"{4 * b.pp}, so more micro-batches will not shrink it: stage {slow}{what} is the "
        f"slowest, {work[slow] / mean - 1:.0%} above the mean stage, and paces the others."
    )
    lead_zh = (f"流水线气泡占 {b.bubble_fraction:.0%}，而微批数 m = {b.microbatches} 已 ≥ 4p = "
               f"{4 * b.pp}，再加微批也减不了多少：第 {slow} 段{what_zh}最慢，比平均段慢 "
               f"{work[slow] / mean - 1:.0%}，拖住了其他段。")  # fmt: skip
    if b.chunks != 1:  # several chunks a rank: one stage_layers entry per virtual stage
        return Advice(
            "bubble",
            f"{lead} Rebalance the layers: give its chunks about {move} fewer in stage_layers "
            f"(one entry per virtual stage, pp*v = {b.pp * b.chunks}).",
            f"{lead_zh}重新分配层数：在 stage_layers 里给它的各块共少放约 {move} 层"
            f"（每个虚拟阶段一项，共 pp*v = {b.pp * b.chunks} 项）。",
        )
    split = _moved(list(work), list(layers), slow, move, per_layer)
    flag = _megatron_flag(slow, len(work), split)
    stage_layers = ",".join(map(str, split))
    return Advice(
        "bubble",
        f"{lead} Rebalance the layers: stage_layers={stage_layers} moves {move} off it{flag[0]}.",
        f"{lead_zh}重新分配层数：stage_layers={stage_layers}，从它移走 {move} 层{flag[1]}。",
    )


def _moved(work: list[float], layers: list[int], slow: int, move: int, per: float) -> list[int]:
    """``layers`` with ``move`` layers taken off stage ``slow``, each given to the stage
    that is then the lightest."""
    layers[slow] -= move
    work[slow] -= move * per
    for _ in range(move):
        light = min((w, k) for k, w in enumerate(work) if k != slow)[1]
        layers[light] += 1
        work[light] += per
    return layers


def _ends_of(ends: tuple[tuple[bool, bool], ...], stage: int) -> tuple[str, str]:
    if stage >= len(ends):
        return "", ""
    embedding, head = ends[stage]
    if head:
        return " (it also runs the output head)", "（它还要算输出层）"
    if embedding:
        return " (it also runs the embedding)", "（它还要算嵌入层）"
    return "", ""


def _megatron_flag(slow: int, stages: int, split: list[int]) -> tuple[str, str]:
    """Megatron-LM's flags for an uneven first or last stage (arguments.py:
    --decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers)."""
    if slow == stages - 1:
        flag = f"--decoder-last-pipeline-num-layers {split[-1]}"
    elif slow == 0:
        flag = f"--decoder-first-pipeline-num-layers {split[0]}"
    else:
        return "", ""
    return f" (Megatron-LM: {flag})", f"（Megatron-LM：{flag}）"


def _reschedule(b: Breakdown) -> Advice:
    other = _other_schedule(b.schedule)
    return Advice(
        "bubble",
        f"The pipeline bubble is {b.bubble_fraction:.0%} with m = {b.microbatches} >= 4p = "
        f"{4 * b.pp}: what is left is the schedule's own warm-up and drain; {other[0]} "
        "fills more of it.",
        f"流水线气泡占 {b.bubble_fraction:.0%}，微批数 m = {b.microbatches} 已 ≥ 4p = "
        f"{4 * b.pp}：剩下的是调度本身的预热和排空；改用{other[1]}能填上更多空档。",
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


def _gib(n: float) -> str:
    """GiB, or under one GiB the unit that keeps a digit: a small model's "0.0 GiB -> 0.0 GiB"
    hid the very halving its advice names."""
    for unit, size in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def _fits(b: Breakdown, w: WhatIf) -> tuple[str, str]:
    """Said only when the what-if turns an out-of-memory scenario into one that fits."""
    if b.memory_ratio > 1.0 and w.peak_bytes <= b.capacity_bytes:
        return " That fits in HBM.", "这样就能放进显存。"
    return "", ""


def _recompute(b: Breakdown) -> Advice | None:
    w = b.full_recompute
    if w is None or b.recompute == "full" or b.peak_bytes <= 0:
        return None
    share = b.activations_bytes / b.peak_bytes
    rescues = b.memory_ratio > 1.0 and w.peak_bytes <= b.capacity_bytes
    if share <= ACT_SHARE_LIMIT and not rescues:
        return None
    # Korthikanti et al. 2022 §5 / Narayanan et al. 2021 eq. 3: full recompute runs each
    # layer's forward again in the backward, 72 -> 96 units of work (~33% more FLOPs).
    more = w.flops_ratio - 1.0
    fit, fit_zh = _fits(b, w)
    act, act_w, peak, peak_w = (_gib(x) for x in (b.activations_bytes, w.activations_bytes,
                                                   b.peak_bytes, w.peak_bytes))  # fmt: skip
    return Advice(
        "recompute",
        f"Activations are {share:.0%} of the peak GPU's {peak}: full activation recompute "
        f"(checkpointing) keeps only each layer's input, {act} -> {act_w} (peak {peak} -> "
        f"{peak_w}), for one more forward per micro-batch: {more:.0%} more compute "
        f"(Korthikanti et al. 2022).{fit}",
        f"激活占显存峰值 {peak} 的 {share:.0%}：开启完整激活重计算（检查点），每层只存输入，"
        f"激活 {act} → {act_w}（峰值 {peak} → {peak_w}），代价是每个微批多做一次前向，"
        f"计算量多 {more:.0%}（Korthikanti et al. 2022）。{fit_zh}",
    )


def _mixed_precision(b: Breakdown) -> Advice | None:
    w = b.bf16
    if w is None or b.dtype != "fp32":
        return None
    # Micikevicius et al. 2018 §3: 16-bit weights, activations and gradients with an fp32
    # master copy; Adam's state stays 16 B/param (4+4+8 -> 2+2+12, Rajbhandari et al. 2020 §3).
    fit, fit_zh = _fits(b, w)
    act, act_w, peak, peak_w = (_gib(x) for x in (b.activations_bytes, w.activations_bytes,
                                                   b.peak_bytes, w.peak_bytes))  # fmt: skip
    tp, tp_w = _gib(b.tp_bytes), _gib(w.tp_bytes)
    rate = w.gemm_rate > 1.0 + 1e-9
    # The datasheets' dense TF32 vs 16-bit tensor-core figures (app/core/inputs/hardware.py).
    speed = f" GEMMs run at the 16-bit tensor-core rate, {w.gemm_rate:.1f}x TF32's." if rate else ""
    speed_zh = f"矩阵乘改用 16 位张量核心，速率是 TF32 的 {w.gemm_rate:.1f} 倍。" if rate else ""
    return Advice(
        "mixed_precision",
        f"This step trains in fp32: bf16 mixed precision with fp32 master weights "
        f"(Micikevicius et al. 2018) halves activations, {act} -> {act_w} (peak {peak} -> "
        f"{peak_w}), and TP traffic, {tp} -> {tp_w} per step; weights, gradients and Adam "
        f"stay 16 bytes per parameter (4+4+8 -> 2+2+12).{speed}{fit}",
        f"当前以 FP32 训练：开启 BF16 混合精度（保留 FP32 主权重，Micikevicius et al. 2018），"
        f"激活显存减半 {act} → {act_w}（峰值 {peak} → {peak_w}），TP 组内通信量每步 {tp} → "
        f"{tp_w}，带宽要按半精度重新核对；权重+梯度+优化器仍是每参数 16 字节"
        f"（4+4+8 → 2+2+12）。{speed_zh}{fit_zh}",
    )


RULES = (_memory, _recompute, _mixed_precision, _tp, cp_rule, ep_rule, _bubble, _dp)


def advise(b: Breakdown) -> list[Advice]:
    return [a for rule in RULES if (a := rule(b)) is not None]
