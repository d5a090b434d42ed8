"""Parameters and the model state they carry per GPU: weights, gradients (with an fp32
accumulation buffer where the framework keeps one) and optimizer states, after ZeRO.
Notation as in Narayanan et al. 2021: l layers, h hidden, s sequence, V vocabulary."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from app.core.cost.shapes import even_chunk_layers
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training

Ends = tuple[bool, bool] | None  # (holds the embedding, holds the head) of one chunk


def layer_matmul_params(m: ModelSpec) -> int:
    h, f = m.hidden, m.ffn_hidden
    q = m.q_dim  # h unless head_dim says otherwise
    attn = h * (q + 2 * m.kv_dim) + q * h  # QKV (K, V at kv_dim under GQA) and output
    if m.mla:
        attn = mla_params(m)
    mlp = (3 if m.gated_mlp else 2) * h * f  # SwiGLU has gate, up and down
    return attn + (moe_mlp_params(m) if m.experts else mlp)


def mla_params(m: ModelSpec) -> int:
    """Multi-head latent attention's matrices (shapes.mla_gemms; DeepSeek-V2 report §2.1):
    Q down and up (or one full-rank Q), KV down with the RoPE key, KV up, and the output."""
    h, qk = m.hidden, m.qk_dim
    q = m.q_lora_rank * (h + qk) if m.q_lora_rank else h * qk
    kv = h * (m.kv_lora_rank + m.rope_head_dim)
    kv += m.kv_lora_rank * m.heads * (m.head_size + m.v_head_dim)
    return q + kv + m.o_dim * h


def moe_mlp_params(m: ModelSpec) -> int:
    """One MoE layer's MLP as one EP rank holds it: the router (h x experts), the shared
    experts, and experts/expert_shards routed experts (Megatron-LM moe_layer.py:
    num_local_experts = num_moe_experts / ep); expert TP divides it later, as the MLP's."""
    one = (3 if m.gated_mlp else 2) * m.hidden * m.moe_width
    local = m.experts // m.expert_shards
    return m.hidden * m.experts + (m.shared_experts + local) * one


def expert_params_per_layer(m: ModelSpec) -> float:
    """The routed experts one EP rank holds, per layer of the mean layer (layer_params')."""
    one = (3 if m.gated_mlp else 2) * m.hidden * m.moe_width
    return m.moe_layers / m.layers * (m.experts // m.expert_shards) * one


# Cached: a pure function of a frozen ModelSpec, asked per stage of every candidate by the
# planner, where a mixture of experts' replace(m, experts=0) was ~5% of DeepSeek-V3's plan.
@lru_cache(maxsize=256)
def layer_params(m: ModelSpec) -> int:
    """Parameters of one layer; a mixture of experts: the mean over its dense and MoE
    layers (shapes.layer_mix), as one EP rank holds them."""
    if m.experts:
        dense = replace(m, experts=0)
        moe = m.moe_layers
        return ((m.layers - moe) * _layer_params(dense) + moe * _layer_params(m)) // m.layers
    return _layer_params(m)


def _layer_params(m: ModelSpec) -> int:
    h = m.hidden
    if m.gated_mlp:  # Llama: no biases, two RMSNorm weights (MLA: and its latents' two)
        return layer_matmul_params(m) + 2 * h + m.q_lora_rank + m.kv_lora_rank
    # Narayanan et al. 2021 §5.1: 12h^2 + 13h per layer (biases and two LayerNorms).
    return layer_matmul_params(m) + (h + 2 * m.kv_dim) + h + m.ffn_hidden + h + 4 * h


def layer_tensors(m: ModelSpec) -> int:
    """Parameter tensors in one layer (what a per-tensor ZeRO-3 gathers one by one)."""
    if m.gated_mlp:  # Llama reference model.py: wq, wk, wv, wo, w1, w2, w3 and two RMSNorms
        return 9
    # Narayanan et al. 2021 §5.1's 12h^2 + 13h: QKV, projection, two MLP matrices, each with
    # its bias, and two LayerNorms of weight and bias.
    return 12


def embedding_params(m: ModelSpec) -> int:
    return m.vocab * m.hidden + (m.seq_len * m.hidden if m.learned_positions else 0)


def head_params(m: ModelSpec) -> int:
    """Final norm plus the output projection (a copy of the embedding when tied)."""
    return 2 * m.hidden + m.vocab * m.hidden


def total_params(m: ModelSpec) -> int:
    # Narayanan et al. 2021 §5.1: P = 12lh^2 (1 + 13/(12h) + (V+s)/(12lh)) for GPT.
    head = 2 * m.hidden if m.tied_embeddings else head_params(m)
    return m.layers * layer_params(m) + embedding_params(m) + head


def end_params(
    m: ModelSpec, stage: int, chunk: int, chunks: int, head_stage: int, ends: Ends = None
) -> int:
    """What a chunk holds beyond its layers: the embedding on virtual stage 0 (rank 0, chunk
    0), the head on the last one, which is ``head_stage``'s last chunk in every placement
    (schedules.stage_location(name, pp*chunks - 1, pp) == (head_stage, chunks - 1)).
    ``ends`` = (embedding, head) of this chunk when given (shapes.chunk_ends: DualPipe's two
    copies put an embedding and a head on each end rank)."""
    first, last = ends or (stage == 0 and chunk == 0, stage == head_stage and chunk == chunks - 1)
    n = embedding_params(m) if first else 0
    if last:
        # A tied head on the embedding's own rank reuses it: only the final norm is new.
        n += 2 * m.hidden if (m.tied_embeddings and stage == 0) else head_params(m)
    return n


def chunk_params(
    m: ModelSpec, stage: int, chunk: int, head_stage: int, layers: list[int], ends: Ends = None
) -> int:
    """Parameters of one chunk of ``stage`` (whole, not a TP shard); layers = the rank's."""
    extra = end_params(m, stage, chunk, len(layers), head_stage, ends)
    return layers[chunk] * layer_params(m) + extra


def stage_params(
    m: ModelSpec,
    stage: int,
    pp: int,
    tp: int,
    chunks: int,
    head_stage: int,
    layers: list[int] | None = None,
    ends: list[tuple[bool, bool]] | None = None,
) -> int:
    """Parameters one rank of pipeline stage ``stage`` holds (its TP shard).

    ``head_stage`` is the rank holding the last virtual stage: pp-1, or 0 for a V placement;
    ``layers`` the rank's layers per chunk (default: the even split, shapes.default_split);
    ``ends`` its chunks' (embedding, head) where the placement gives them (shapes.chunk_ends).
    """
    layers = layers or even_chunk_layers(m, pp, chunks)[stage]
    return (
        sum(
            chunk_params(m, stage, c, head_stage, layers, ends[c] if ends else None)
            for c in range(chunks)
        )
        // tp
    )


def rank_params(
    m: ModelSpec, pp: int, tp: int, chunks: int, head_stage: int, layers: list[list[int]]
) -> list[int]:
    """stage_params of every pipeline rank, for the even placement's ends."""
    return [stage_params(m, s, pp, tp, chunks, head_stage, layers[s]) for s in range(pp)]


def grad_parts(t: Training) -> tuple[float, float]:
    """(16-bit gradient, fp32 accumulation buffer) bytes per parameter, before ZeRO.

    Megatron-LM docs/source/api-guide/dist_optimizer.md: bf16 weights with fp32 grads keep
    2 + 4 + 12 = 18 bytes/param; the fp32 main_grad replaces the 16-bit .grad (gradient
    accumulation fusion writes it directly), so the 16-bit part is 0 then."""
    e = float(t.element_bytes)
    return (0.0, 4.0) if t.accum_fp32 else (e, 0.0)


def state_bytes_per_param(t: Training, dp: int) -> tuple[float, float, float]:
    """(weights, grads, optimizer) bytes per parameter after ZeRO partitioning; grads are
    grad_parts' sum (the fp32 buffer where there is one)."""
    e = float(t.element_bytes)
    if t.dtype == "fp32":  # Rajbhandari et al. 2020 §3: plain fp32 Adam 4 + 4 + 8
        w, o = 4.0, 8.0
    elif t.master_weights:  # §3: fp32 master weight, momentum and variance, 4 + 4 + 4 = 12
        w, o = e, 12.0
    else:  # pure 16-bit: Adam's two moments in the weights' dtype, no master copy
        w, o = e, 2.0 * e
    g = sum(grad_parts(t))
    # ZeRO-1 shards the optimizer, -2 also the gradients, -3 also the weights (§5); under
    # no_sync accumulation the gradients are whole until the last micro-batch's backward.
    return (
        w / dp if t.zero >= 3 else w,
        g / dp if t.grads_sharded else g,
        o / dp if t.zero >= 1 else o,
    )
