"""Strings of the formula cards with the scenario's numbers, in English and Chinese. A cause's
{0}, {1}, {2} are its numbers (app/core/views/formula_tokens.py), filled in by the page."""

from __future__ import annotations

FORMULAS: dict[str, tuple[str, str]] = {
    "formulas.with_numbers": ("With this scenario's numbers", "代入当前场景的数值"),
    "formulas.vs": ("simulated {0} vs closed form {1}", "模拟 {0}，公式 {1}"),
    "formulas.memory_vs": (
        "stage {0}, the fullest: {1} vs the formula's {2}",
        "显存最高的阶段 {0}：{1}，公式估算 {2}",
    ),
    "formulas.agrees": ("The simulation agrees with the closed form.", "模拟结果与公式一致。"),
    "formulas.why": ("Why they differ:", "差异来自："),
    "formulas.undecomposed": (
        "Too many micro-batches to re-simulate each cause in one request.",
        "微批太多，一次请求内无法逐项重新模拟拆解原因。",
    ),
    "formulas.reference": (
        "The 1F1B closed form, for reference: {0} splits the backward into B and W.",
        "此为 1F1B 的公式，仅作参照：{0} 把反向拆成 B 与 W。",
    ),
    "formulas.pts": ("pts", "个百分点"),
    "formulas.teaching_units": ("units", "单位"),
    "formulas.cause.tp": (
        "TP all-reduce ({0} inside each chunk's F and again in its B) lengthens every stage alike",
        "TP AllReduce（每个块的 F 内 {0}，B 内再一次）让每个阶段等量变长",
    ),
    "formulas.cause.p2p": ("p2p sends add {0} per hop", "p2p 发送每跳增加 {0}"),
    "formulas.cause.uneven": (
        "uneven stages: stage {0}'s F+B, TP time aside, is {1} vs the mean {2} (embedding "
        "on the first stage, output head on the last)",
        "阶段不均：除去 TP 时间，阶段 {0} 的 F+B 为 {1}，平均为 {2}"
        "（嵌入层在第一段，输出头在最后一段）",
    ),
    "formulas.cause.schedule": ("the {0} schedule's own order", "{0} 调度自身的排布"),
    "formulas.cause.zb": (
        "{0} fills the bubble with weight-gradient (W) passes",
        "{0} 用权重梯度（W）计算填补气泡",
    ),
    "formulas.cause.ends": (
        "stage {0} holds {1} parameters vs the formula's even share {2} (embedding / head)",
        "阶段 {0} 持有 {1} 个参数，公式按均分为 {2}（嵌入层 / 输出头）",
    ),
    "formulas.cause.logits": (
        "one micro-batch's fp32 logits on stage {0} (4·s·b·V/TP)",
        "阶段 {0} 上一个微批的 FP32 logits（4·s·b·V/TP）",
    ),
    "formulas.cause.held": (
        "this stage holds {0} layer-micro-batches of activations vs the formula's {1}",
        "该阶段存有 {0} 份“层 × 微批”的激活，公式为 {1} 份",
    ),
    "formulas.where.world": ("N GPUs in all", "N 为 GPU 总数"),
    "formulas.where.batch": (
        "B_eff sequences per step: DP replicas × micro-batch size b × k accumulated "
        "micro-batches (k = m); times s tokens each, the tokens per step",
        "B_eff 为每步序列数：DP 副本数 × 微批大小 b × 累积的微批数 k（k = m）；"
        "再乘每序列 s 个 token，即每步 token 数",
    ),
    "formulas.where.bubble": (
        "p pipeline stages, m micro-batches, v model chunks per GPU",
        "p 为流水线段数，m 为微批数，v 为每卡的模型块数",
    ),
    "formulas.where.memory": (
        "P parameters; w, g, o bytes per parameter of weights, gradients and optimizer; "
        "A activation bytes per layer and micro-batch; L layers; k micro-batches in flight",
        "P 为参数量；w、g、o 为每个参数的权重、梯度、优化器字节数；A 为每层每微批的激活字节数；"
        "L 为层数；k 为在途微批数",
    ),
    "formulas.where.comm": (
        "Bytes one GPU sends per step. s sequence, b micro-batch size, h hidden, e bytes per "
        "element, L_r the GPU's layers, m micro-batches, n passes (3 with full recompute), "
        "c boundary crossings, Ψ the GPU's parameters, G ZeRO-3 gathers",
        "每张卡每步发送的字节数。s 序列长度，b 微批大小，h 隐藏维度，e 每元素字节数，L_r 该卡层数，"
        "m 微批数，n 计算遍数（完整重计算为 3），c 过界次数，Ψ 该卡参数量，G 为 ZeRO-3 收集次数",
    ),
    "formulas.where.step": (
        "pipeline, exposed DP all-reduce, optimizer; Θ tokens/s, B sequences of s tokens, "
        "F model FLOPs per step, N GPUs at their peak",
        "流水线、未被掩盖的 DP AllReduce、优化器；Θ 为每秒 token 数，B 个长度为 s 的序列，"
        "F 为每步模型 FLOPs，N 张卡的峰值算力",
    ),
}
