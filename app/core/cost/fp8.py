"""FP8 linear layers: which of a layer's GEMMs run at the FP8 rate, their casts to FP8 (with
the amax and scales each recipe needs), and the FP8 weight copies kept beside the 16-bit ones.

Attention (FlashAttention), norms, the output head and every collective but an FP8 weight
gather stay 16-bit, as Transformer Engine and torchao run them: only ``nn.Linear`` /
``te.Linear`` GEMMs are FP8 (TE docs, "Using FP8 with Transformer Engine"; torchao
float8/README.md). Training.fp8 == "none" never reaches this module.
"""

from __future__ import annotations

from app.core.cost.compute import gemm_efficiency, gemm_seconds, hbm_seconds
from app.core.cost.memory_states import expert_params_per_layer, layer_matmul_params
from app.core.cost.shapes import Gemm, layer_gemms, layer_mix, rank_tokens
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training

# Bytes per element of one cast of a 16-bit tensor to FP8 for a GEMM and its transpose: read
# 2, write the row-wise copy (1) and the column-wise one (1). Hopper's FP8 GEMM takes the TN
# layout only, so TE casts and transposes in one kernel (TE docs, FP8 primer "cast_transpose");
# MXFP8 and 1x128 blocks scale along K, so the backward needs a copy scaled along the other
# dimension (TE MXFP8BlockScaling docs; DeepSeek-V3 tech report §3.3.1, 128x1 backward tiles).
CAST_BYTES = 4.0
# Current (just-in-time) tensorwise scaling reads the tensor once more for its amax before the
# cast (TE Float8CurrentScaling; torchao float8 README: dynamic scaling); delayed scaling
# takes the scale from past steps' amax history and records this amax inside the cast kernel
# (TE DelayedScaling; Micikevicius et al. 2022 §4.3).
AMAX_PASS_BYTES = 2.0
# Scale bytes per element, row-wise and column-wise copies: an fp32 scale per 128 (DeepSeek-V3
# §3.3.1; TE Float8BlockScaling), an E8M0 byte per 32 (OCP Microscaling spec v1.0 §5.2).
SCALE_BYTES = {"tensorwise": 0.0, "blockwise": 2 * 4.0 / 128, "mxfp8": 2 * 1.0 / 32}
# FP8 weight copies a rank keeps through the step: the FP8 weight and its transpose (TE
# caches them from the first micro-batch on: te.Linear is_first_microbatch), 1 + 1 bytes.
WEIGHT_CACHE_BYTES = 2.0


def cast_bytes_per_element(t: Training) -> float:
    """HBM bytes to cast one 16-bit element to the recipe's FP8 copies (module constants)."""
    amax = AMAX_PASS_BYTES if t.fp8 == "tensorwise" and t.fp8_scaling == "current" else 0.0
    return CAST_BYTES + amax + SCALE_BYTES[t.fp8]


def fp8_gemm_seconds(g: Gemm, hw: HardwareSpec) -> float:
    """One GEMM at the FP8 rate: compute.gemm_seconds' roofline with 1-byte inputs and a
    16-bit output (Micikevicius et al. 2022 §3: FP8 in, higher precision out). A rate k times
    the 16-bit one needs GEMMs k times larger to fill the GPU (hardware.py, HOPPER's
    gemm_half_gflop), so the efficiency curve reads the GEMM's size over that ratio."""
    one = 2.0 * g.m * g.n * g.k
    size = one * g.count if g.batched else one
    ratio = hw.fp8_tflops / hw.peak_tflops
    compute = one / (hw.fp8_tflops * 1e12 * gemm_efficiency(size / ratio, hw))
    memory = hbm_seconds(g.m * g.k + g.k * g.n + 2 * g.m * g.n, hw)
    return g.count * max(compute, memory)


def gemm_plan(g: Gemm, hw: HardwareSpec, t: Training) -> tuple[float, float, float]:
    """(GEMM seconds per pass, forward casts, backward casts) of one linear layer's GEMM.

    Converted only where FP8 gains over its three passes (forward, input and weight
    gradients) after its casts, as torchtitan's auto_filter_small_kn leaves small linears
    in 16-bit (docs/float8.md: the GEMM "has to be big enough that the speedup from using FP8
    tensorcores is greater than the overhead of creating dynamically quantized inputs")."""
    bf16 = gemm_seconds(g, hw, 2)
    per = cast_bytes_per_element(t)
    # Forward casts the input (m x k) and the weight (k x n), the weight once a step (TE's
    # is_first_microbatch cache); the backward casts the output gradient (m x n, E5M2).
    weight = g.k * g.n / max(t.microbatches, 1)
    cast_f = g.count * hbm_seconds(per * (g.m * g.k + weight), hw)
    cast_b = g.count * hbm_seconds(per * g.m * g.n, hw)
    fp8 = fp8_gemm_seconds(g, hw)
    if 3 * fp8 + cast_f + cast_b >= 3 * bf16:
        return bf16, 0.0, 0.0
    return fp8, cast_f, cast_b


def layer_seconds(
    m: ModelSpec, hw: HardwareSpec, t: Training, tp: int
) -> tuple[float, float, float]:
    """One layer's (GEMM seconds per pass, forward cast seconds, backward cast seconds) on
    one TP rank; a mixture of experts: the mean of its dense and MoE layers (layer_mix), as
    compute.layer_gemm_seconds weighs them. Host launch time is left to that function."""
    tokens = rank_tokens(m, t)
    gemm = cast_f = cast_b = 0.0
    for w, k in layer_mix(m):
        for g in layer_gemms(k, tokens, tp, t.etp):
            s, f, b = gemm_plan(g, hw, t)
            gemm, cast_f, cast_b = gemm + w * s, cast_f + w * f, cast_b + w * b
    return gemm, cast_f, cast_b


def weight_cache_bytes(m: ModelSpec, t: Training, tp: int, layers: int) -> float:
    """FP8 weight copies a rank holds beside its 16-bit weights (which stay: the optimizer
    updates them, TE docs "FP8 weights" and torchao keep the high-precision weight) over
    ``layers`` layers. None under ZeRO-3: the FP8 weight is made per gather and freed after
    use, as the 16-bit gathered one is (torchao float8 with FSDP2)."""
    if t.fp8 == "none" or t.zero >= 3:
        return 0.0
    # Routed experts are split over etp, not tp (memory._expert_states holds them so).
    routed = expert_params_per_layer(m) if m.experts else 0.0
    per_layer = (layer_matmul_params(m) - routed) / tp + routed / t.expert_tp(tp)
    return layers * per_layer * WEIGHT_CACHE_BYTES
