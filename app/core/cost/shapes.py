"""The GEMMs one TP rank runs for one layer and one micro-batch, and how layers split over
pipeline stages. Notation of Narayanan et al. 2021: b micro-batch, s sequence, h hidden,
a heads, t = tp, V vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.inputs.models import ModelSpec
from app.core.schedules import ScheduleName, stage_location, stages_per_copy, virtual_stage


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


def default_split(layers: int, slices: int) -> list[int]:
    """Layers of each of ``slices`` virtual stages, in pipeline order, when none are given.

    An uneven split gives the remainder to the middle stages: the short ones are taken
    alternately from the front and the back, so the first and the last, which also hold the
    embedding and the head, are lighter (Dubey et al. 2024 §3.3.2: Llama 3 405B's 126 layers
    on 16 stages drop one layer from the first and the last). One rule for every v: with one
    chunk per rank it is the per-rank split the cost model always used.
    """
    base, extra = divmod(layers, slices)
    if extra == 0:
        return [base] * slices
    short = slices - extra
    front, back = (short + 1) // 2, short // 2
    return [base if k < front or k >= slices - back else base + 1 for k in range(slices)]


def chunk_layers(split: Sequence[int], name: ScheduleName | str, pp: int) -> list[list[int]]:
    """``split`` (layers per virtual stage) as layers[rank][chunk], through the schedule's
    placement (schedules.stage_location: interleaved k -> (k % pp, k // pp), V for zbv)."""
    name = ScheduleName(name)
    out = [[0] * (len(split) // pp) for _ in range(pp)]
    for vs, n in enumerate(split):
        rank, chunk = stage_location(name, vs, pp)
        out[rank][chunk] = n
    return out


def chunk_ends(name: ScheduleName | str, pp: int, chunks: int) -> list[list[tuple[bool, bool]]]:
    """(holds the embedding, holds the head) of each rank's chunks: the first and the last
    stage of each copy of the model (one copy; DualPipe's two put both on each end rank)."""
    name = ScheduleName(name)
    run = stages_per_copy(name, pp, chunks)
    at = [[virtual_stage(name, r, c, pp) % run for c in range(chunks)] for r in range(pp)]
    return [[(k == 0, k == run - 1) for k in row] for row in at]


def even_chunk_layers(m: ModelSpec, pp: int, chunks: int) -> list[list[int]]:
    """The default split placed interleaved-style (chunk c of rank r is stage c*pp + r): what
    callers that name no schedule get (the planner; any v = 1 schedule)."""
    return chunk_layers(default_split(m.layers, pp * chunks), ScheduleName.interleaved, pp)


def layers_per_chunk(m: ModelSpec, pp: int, chunks: int, stage: int) -> int:
    """Layers in the first chunk of ``stage`` under the default split: every chunk's count
    when the split is even or there is one chunk per rank."""
    return default_split(m.layers, pp * chunks)[stage]


def param_tensors(m: ModelSpec, layers: int, first: bool, last: bool) -> int:
    """Parameter tensors of a rank with ``layers`` layers, plus the embedding (``first``) and
    the head (``last``): what a one-tensor-at-a-time optimizer steps through.
    Per layer, as gpu_probe/model.py's Block and Hugging Face's LlamaDecoderLayer hold them:
    two norms (LayerNorm weight and bias; RMSNorm weight only), q, k, v and o, and the MLP's
    two matrices (three gated)."""
    norm = 1 if m.gated_mlp else 2
    per_layer = 2 * norm + 4 + (3 if m.gated_mlp else 2)
    embed = 2 if m.learned_positions else 1
    head = norm + (0 if m.tied_embeddings else 1)
    return layers * per_layer + (embed if first else 0) + (head if last else 0)
