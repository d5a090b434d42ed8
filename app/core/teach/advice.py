"""The article's tuning rules, as checks over a breakdown that is predicted or measured."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost.predict import WhatIf  # what the advice weighs: computed by the cost model

# The article's thresholds: TP traffic above ~30% of the step means TP is too wide or crosses
# nodes; a bubble above ~20% wants more micro-batches (m >= 4p keeps it small); DP traffic
# that dominates wants gradient accumulation.
TP_SHARE_LIMIT = 0.30
BUBBLE_LIMIT = 0.20
DP_SHARE_LIMIT = 0.30
# Activations above half of the peak GPU's memory dominate it: recompute is the lever.
ACT_SHARE_LIMIT = 0.50
GIB = 1 << 30


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
    # The memory tips' inputs; their defaults (a measured run's) keep those tips silent.
    dtype: str = "bf16"
    recompute: str = "full"
    peak_bytes: float = 0.0
    activations_bytes: float = 0.0  # on the peak-memory GPU
    capacity_bytes: float = 0.0
    tp_bytes: float = 0.0
    full_recompute: WhatIf | None = None
    bf16: WhatIf | None = None


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


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


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


RULES = (_memory, _recompute, _mixed_precision, _tp, _bubble, _dp)


def advise(b: Breakdown) -> list[Advice]:
    return [a for rule in RULES if (a := rule(b)) is not None]
