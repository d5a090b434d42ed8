"""FLOPs of one layer and of one training iteration."""

from __future__ import annotations

from app.core.cost.shapes import attention_flops, layer_gemms, layer_mix, logits_gemm
from app.core.inputs.models import ModelSpec


def forward_flops_per_layer(m: ModelSpec, tokens: int) -> float:
    # Narayanan et al. 2021 eq. 3 derivation: 2 FLOPs per matmul parameter per token
    # (24bsh^2 for GPT) plus attention scores and values, 4bs^2h. A mixture of experts: the
    # mean layer, each MoE layer at its active parameters (top_k experts, shared, router).
    return sum(w * _one_layer(k, tokens) for w, k in layer_mix(m))


def _one_layer(m: ModelSpec, tokens: int) -> float:
    return sum(g.flops for g in layer_gemms(m, tokens, 1)) + attention_flops(m, tokens, 1)


def forward_flops_logits(m: ModelSpec, tokens: int) -> float:
    return logits_gemm(m, tokens, 1).flops  # Narayanan et al. 2021 eq. 3: 2bshV


def model_flops(m: ModelSpec, global_batch: int) -> float:
    """Training FLOPs per iteration, no recompute: backward = 2x forward."""
    # Narayanan et al. 2021 eq. 3 with the recompute pass removed: 72Bslh^2(1+s/6h+V/12lh).
    tokens = global_batch * m.seq_len
    return 3.0 * (m.layers * forward_flops_per_layer(m, tokens) + forward_flops_logits(m, tokens))


def hardware_flops(
    m: ModelSpec, global_batch: int, recompute: str, recomputed: float | None = None
) -> float:
    """FLOPs the GPUs execute: full recompute repeats each layer's forward (eq. 3's 96);
    ``recomputed``: how many layers it repeats (Megatron --recompute-num-layers); None: all."""
    tokens = global_batch * m.seq_len
    if recompute == "full" and recomputed is not None:
        # Narayanan et al. 2021 eq. 3's recompute term, for the recomputed layers only.
        return model_flops(m, global_batch) + recomputed * forward_flops_per_layer(m, tokens)
    if recompute == "full":  # Narayanan et al. 2021 eq. 3: 96Bslh^2(1 + s/6h + V/16lh)
        extra = forward_flops_per_layer(m, tokens)
    elif recompute == "selective":  # Korthikanti et al. 2022 §5: only QK^T/softmax/AV again
        extra = attention_flops(m, tokens, 1)
    else:
        extra = 0.0
    return model_flops(m, global_batch) + m.layers * extra
