"""The GEMMs one TP rank runs for one layer and one micro-batch, and how layers split over
pipeline stages. Notation of Narayanan et al. 2021: b micro-batch, s sequence, h hidden,
a heads, t = tp, V vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.models import ModelSpec


@dataclass(frozen=True)
class Gemm:
    """One (m x k) @ (k x n) product, run ``count`` times."""

    m: int
    n: int
    k: int
    count: int = 1

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.count


def layer_gemms(m: ModelSpec, tokens: int, tp: int) -> list[Gemm]:
    """Forward GEMMs of one layer on one TP rank (Shoeybi et al. 2019 §3: Q, K, V and the MLP's
    first matrices column-parallel, the attention output and MLP output row-parallel)."""
    h, f = m.hidden, m.ffn_hidden
    up = 2 if m.gated_mlp else 1  # SwiGLU's gate and up projections (Shazeer 2020 eq. 6)
    return [
        Gemm(tokens, (h + 2 * m.kv_dim) // tp, h),  # fused QKV
        Gemm(tokens, h, h // tp),  # attention output projection
        Gemm(tokens, f // tp, h, count=up),
        Gemm(tokens, h, f // tp),  # MLP down projection
    ]


def logits_gemm(m: ModelSpec, tokens: int, tp: int) -> Gemm:
    return Gemm(tokens, m.vocab // tp, m.hidden)  # Narayanan et al. 2021 eq. 3: 2bshV


def attention_flops(m: ModelSpec, tokens: int, tp: int) -> float:
    # Narayanan et al. 2021 eq. 3: QK^T and attention x V, 4bs^2h over the layer's heads.
    return 4.0 * tokens * m.seq_len * m.hidden / tp


def layers_per_chunk(m: ModelSpec, pp: int, chunks: int, stage: int) -> int:
    """Layers in one chunk of ``stage``. With one chunk per rank an uneven split shortens the
    end stages first, which also hold the embedding and the head (Dubey et al. 2024 §3.3.2:
    Llama 3 405B's 126 layers on 16 stages drop one layer from the first and the last)."""
    base, extra = divmod(m.layers, pp * chunks)
    if extra == 0 or chunks > 1:
        return base
    # `pp - extra` stages get `base` layers, taken alternately from the front and the back.
    short = pp - extra
    front, back = (short + 1) // 2, short // 2
    return base if stage < front or stage >= pp - back else base + 1
