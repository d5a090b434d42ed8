"""Seconds of one GPU's kernels: GEMMs on a shape-dependent efficiency curve with a roofline,
attention (flash or explicit), and memory-bound work at HBM bandwidth."""

from __future__ import annotations

from app.core.cost.shapes import (
    Gemm,
    attention_flops,
    busiest_share,
    layer_gemms,
    layer_mix,
    logits_gemm,
    rank_seq,
    rank_tokens,
)
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training


def gemm_efficiency(flops: float, hw: HardwareSpec) -> float:
    """Fraction of peak a GEMM of ``flops`` sustains: small GEMMs cannot fill the GPU's SMs
    (Isaev et al. 2023, Calculon §4: efficiency rises with the matmul's size and saturates)."""
    gflop = flops / 1e9
    e = hw.efficiency
    return e.gemm_max_fraction * gflop / (gflop + e.gemm_half_gflop)


def hbm_seconds(nbytes: float, hw: HardwareSpec) -> float:
    return nbytes / (hw.hbm_tbps * 1e12 * hw.efficiency.hbm_fraction)


# Kernels one layer launches on one TP rank in eager PyTorch, counted with TorchDispatchMode
# on gpu_probe.model.Block (torch 2.13, tp=1; views, transposes and detaches launch nothing and
# are left out). Forward: 6 GEMMs (Q, K, V, attention out, MLP in, MLP out) and 6 others (2
# layer norms, attention, GELU, 2 residual adds). Backward: 12 GEMMs (an input and a weight
# gradient per forward GEMM) and 8 others (2 norm, attention and GELU backwards, 4 adds).
LAYER_GEMM_KERNELS = 6
LAYER_OTHER_KERNELS = (6, 8)  # (forward, backward)
# The output layer's forward: final norm, logits GEMM, log-softmax, NLL, the 1/m scale.
HEAD_KERNELS = 5
# torch.optim's foreach AdamW (torch/optim/adamw.py _multi_tensor_adamw): about a dozen
# multi-tensor ops a step, each one launch per tensor list (fused Adam: fewer).
OPTIMIZER_KERNELS = 12


# FlashAttention-1 (and the Triton port of its algorithm) against FlashAttention-2 on the same
# GPU: Dao 2023 (FlashAttention-2) abstract and §4.1, "around 2x faster" (25-40% of A100 peak
# against 50-73%). The profiles' flash_fraction is FlashAttention-2's.
FA1_SPEED = 0.5


def host_overhead_s(kernels: float, hw: HardwareSpec) -> float:
    """Host seconds of ``kernels`` launches at the profile's per-kernel overhead, added to the
    kernels' own time: on CPU one thread runs both. On a GPU launches are asynchronous and
    hide behind kernels longer than them (Paszke et al. 2019, PyTorch §5.2), so there the
    sum holds for launch-bound layers only, which is where calibrate measures it."""
    return kernels * hw.efficiency.kernel_overhead_us * 1e-6


def gemm_seconds(g: Gemm, hw: HardwareSpec, element_bytes: int) -> float:
    # Williams et al. 2009 roofline: the slower of compute and moving A, B and C once.
    one = 2.0 * g.m * g.n * g.k
    # A batched GEMM (cuBLAS strided batched) fills the SMs with the whole batch at once.
    size = one * g.count if g.batched else one
    compute = one / (hw.matmul_tflops(element_bytes) * 1e12 * gemm_efficiency(size, hw))
    memory = hbm_seconds(element_bytes * (g.m * g.k + g.k * g.n + g.m * g.n), hw)
    return g.count * max(compute, memory)


def layer_gemm_seconds(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> float:
    """One layer's forward GEMMs; its backward runs each twice (input and weight grads), as
    durations.layer_cost charges this once in F, once in B and once in W. Each pass launches
    LAYER_GEMM_KERNELS GEMMs, so their host time comes with it."""
    tokens = rank_tokens(m, t)
    kernels = sum(  # a mixture of experts: the mean of its dense and MoE layers (layer_mix)
        w * sum(gemm_seconds(g, hw, t.element_bytes) for g in layer_gemms(k, tokens, tp, t.etp))
        for w, k in layer_mix(m)
    )
    return kernels + host_overhead_s(LAYER_GEMM_KERNELS, hw)


def attention_seconds(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> tuple[float, float]:
    """(forward, backward) seconds of the attention core of one layer on one TP rank, with
    the host time of every non-GEMM kernel of the layer's pass (durations.layer_cost charges
    attention once per pass; the memory-bound kernels reach it as bytes only)."""
    core_f, core_b = _attention_core_s(m, hw, t, tp)
    f_kernels, b_kernels = LAYER_OTHER_KERNELS
    return core_f + host_overhead_s(f_kernels, hw), core_b + host_overhead_s(b_kernels, hw)


def _attention_core_s(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> tuple[float, float]:
    tokens = rank_tokens(m, t)
    flops = attention_flops(m, tokens, tp)
    if t.flash_attention:
        # Dao 2023 (FlashAttention-2) §3: a causal mask skips the blocks above the diagonal,
        # half the work; the backward recomputes the scores, 5 matmuls to the forward's 2.
        peak = hw.matmul_tflops(t.element_bytes)
        fraction = hw.efficiency.flash_fraction * (FA1_SPEED if t.flash_kernel == "fa1" else 1.0)
        forward = 0.5 * flops / (peak * 1e12 * fraction)
        return forward, 2.5 * forward
    heads = t.micro_batch_size * m.heads // tp
    d, dv = m.qk_dim // m.heads, m.o_dim // m.heads  # head_size twice, unless MLA
    # Megatron-LM CoreAttention (core/transformer/dot_product_attention.py): one baddbmm over
    # the b x a/t heads for QK^T and one bmm for the scores x V, not a GEMM per head.
    q, s = rank_seq(m, t), m.seq_len  # a CP rank's queries against every key
    bmm = gemm_seconds(Gemm(q, s, d, heads, batched=True), hw, t.element_bytes)
    bmm += gemm_seconds(Gemm(q, dv, s, heads, batched=True), hw, t.element_bytes)
    # Korthikanti et al. 2022 §4.1: the s x s scores are written, then softmax and dropout
    # each read and write them (plus a 1-byte mask): ~5 passes of 2 bytes and 1 of 1.
    scores = heads * q * s
    forward = bmm + hbm_seconds(scores * (5 * t.element_bytes + 1), hw)
    return forward, 2.0 * forward


def elementwise_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """HBM bytes of one layer's memory-bound forward kernels on one TP rank: two norms, two
    bias-dropout-residual adds, the activation function and rotary embeddings."""
    tokens, e, h = rank_tokens(m, t), t.element_bytes, m.hidden
    # Korthikanti et al. 2022 §4.2.2: sequence parallel splits the norms and dropouts over t.
    spread = tokens * h / (tp if t.sequence_parallel else 1)
    norms = 2 * 2 * e * spread  # read x, write y
    residuals = 2 * (3 * e + 1) * spread  # read x and residual, write y and a 1-byte mask
    ffn = tokens * m.ffn_hidden / tp
    act = 3 * e * ffn if m.gated_mlp else 2 * e * ffn  # SwiGLU reads gate and up
    rope = 0 if m.learned_positions else 2 * e * tokens * (m.q_dim + 2 * m.kv_dim) / tp
    if m.mla:  # rotary on the RoPE parts only: every head's query part, the one shared key
        rope = 2 * e * tokens * m.rope_head_dim * (2 * m.heads / tp + 1)
    return norms + residuals + act + rope


def moe_permute_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """HBM bytes of one layer's token shuffles in one pass on one rank, the mean layer's
    share of them (moe_layers / layers). Megatron-LM MoEAlltoAllTokenDispatcher
    (transformer/moe/token_dispatcher.py, moe_utils.py): permute gathers the rank's routed
    rows (tokens x top_k) before the dispatch and unpermute scatters them back after the
    combine; with more than one local expert, sort_chunks_by_idxs regroups the received rows
    by expert after the dispatch and back before the combine. Each reads and writes its rows
    once, h wide; the backward moves the gradients through the same shuffles."""
    if not m.experts:
        return 0.0
    split = tp if t.sequence_parallel and tp > 1 else 1  # each TP rank routes its own shard
    sent = rank_tokens(m, t) / split * m.top_k
    got = sent * busiest_share(m) * t.expert_tp(tp)  # after expert TP's all-gather
    local = m.experts // m.expert_shards
    rows = 2 * sent + (2 * got if local > 1 else 0)
    return m.moe_layers / m.layers * 2 * rows * m.hidden * t.element_bytes


def head_seconds(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> float:
    """Forward of the output layer: the logits GEMM and the fp32 softmax cross-entropy over
    V/t (Megatron-LM tensor_parallel/cross_entropy.py reads the logits and writes fp32)."""
    tokens = rank_tokens(m, t)
    loss_bytes = tokens * m.vocab / tp * (t.element_bytes + 8)
    logits = gemm_seconds(logits_gemm(m, tokens, tp), hw, t.element_bytes)
    return logits + hbm_seconds(loss_bytes, hw) + host_overhead_s(HEAD_KERNELS, hw)


def optimizer_seconds(
    rank_params: int, t: Training, dp: int, hw: HardwareSpec, tensors: int = 0
) -> float:
    """One optimizer step of a rank holding ``rank_params`` in ``tensors`` parameter tensors."""
    # Adam is memory-bound. Rajbhandari et al. 2020 §3 state: read fp32 main grad, master
    # weight, m and v (16 B), write master, m, v (12 B) and the 16-bit weight (2 B).
    shard = rank_params / (dp if t.zero >= 1 else 1)
    # A one-tensor-at-a-time step (torch/optim/adamw.py _single_tensor_adamw) pays its host
    # time per tensor; multi-tensor kernels pay OPTIMIZER_KERNELS launches in all.
    per_tensor = tensors * hw.efficiency.optimizer_tensor_us * 1e-6
    return hbm_seconds(shard * 30.0, hw) + host_overhead_s(OPTIMIZER_KERNELS, hw) + per_tensor
