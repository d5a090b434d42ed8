"""Parameters and memory per pipeline stage: weights, gradients, optimizer state and
activations. Notation as in Narayanan et al. 2021 and Korthikanti et al. 2022: l layers,
h hidden, a heads, s sequence, V vocabulary, b micro-batch size, t = tp, p = pp."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from app.core.cost.shapes import even_chunk_layers
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training

Ends = tuple[bool, bool] | None  # (holds the embedding, holds the head) of one chunk


@dataclass(frozen=True)
class StageMemory:
    stage: int
    params: int
    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    layers: tuple[int, ...] = ()  # transformer layers of each of the rank's chunks

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes + self.activations_bytes


def layer_matmul_params(m: ModelSpec) -> int:
    h, f = m.hidden, m.ffn_hidden
    attn = h * (h + 2 * m.kv_dim) + h * h  # QKV (K, V at kv_dim under GQA) and output
    mlp = (3 if m.gated_mlp else 2) * h * f  # SwiGLU has gate, up and down
    return attn + mlp


def layer_params(m: ModelSpec) -> int:
    h = m.hidden
    if m.gated_mlp:  # Llama: no biases, two RMSNorm weights
        return layer_matmul_params(m) + 2 * h
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


def activation_bytes_per_layer(m: ModelSpec, t: Training, tp: int) -> float:
    """Korthikanti et al. 2022 §4 (Table 2), bytes for one micro-batch, 16-bit activations."""
    s, b, h, a = m.seq_len, t.micro_batch_size, m.hidden, m.heads
    sbh = s * b * h
    # The 5as/h of softmax scores and dropout masks: selective recompute drops them, and
    # flash attention never stores them (Dao et al. 2022 §3.1: O(s) extra memory).
    kept_scores = t.recompute == "none" and not t.flash_attention
    attn = 5.0 * a * s / h if kept_scores else 0.0
    if t.recompute == "full":
        per = 2.0 * sbh / (tp if t.sequence_parallel else 1)  # Table 2: 2sbh (input only)
    elif t.sequence_parallel:
        per = sbh / tp * (34.0 + attn)  # eq. 5/6
    else:
        per = sbh * (10.0 + 24.0 / tp + attn / tp)
    return per * (2.0 if t.dtype == "fp32" else 1.0)


def chunk_activation_bytes(m: ModelSpec, t: Training, tp: int, n: int) -> float:
    """activation_bytes_per_layer, averaged over an ``n``-layer chunk of which only
    t.recomputed(n) are fully recomputed (Megatron --recompute-method block: the first
    --recompute-num-layers keep only their input, Korthikanti et al. 2022 Table 2's 2sbh; the
    others keep all of theirs, the no-recompute row)."""
    if t.recompute != "full" or t.recompute_layers is None or n == 0:
        return activation_bytes_per_layer(m, t, tp)
    k = t.recomputed(n)
    kept = activation_bytes_per_layer(m, replace(t, recompute="none"), tp)
    return (k * activation_bytes_per_layer(m, t, tp) + (n - k) * kept) / n


# Qi et al. 2024 (arXiv 2401.10241) Table 1, per layer: B needs M_B = sb(34h + 5as) of the
# activations, W needs M_W = 32sbh of them (each linear layer's input and output gradient).
W_OF_B = 32.0 / 34.0


def w_pass_share(m: ModelSpec, t: Training, tp: int) -> float:
    """Bytes one layer keeps from its B until its W, over the bytes it keeps from F to B
    (activation_bytes_per_layer). Table 1's M_W / M_B of the layer's activations without the
    attention scores (W reads no softmax or dropout output) and without recompute (B has
    rebuilt them by then), so above 1 under full recompute."""
    whole = activation_bytes_per_layer(m, replace(t, recompute="none", flash_attention=True), tp)
    return W_OF_B * whole / activation_bytes_per_layer(m, t, tp)


def held_frontier(events: Iterable, layers: list[list[int]]) -> list[list[tuple[int, int]]]:
    """Per rank, the (F-to-B, B-to-W) layer-micro-batches it holds after each action of a
    split-backward schedule (events with stage, kind, chunk, each rank's in order), only the
    pairs no other pair beats in both: the peak for any W share is one of them."""
    held = [[0, 0] for _ in layers]
    states: list[list[tuple[int, int]]] = [[(0, 0)] for _ in layers]
    for e in events:
        n, h = layers[e.stage][e.chunk], held[e.stage]
        if e.kind == "F":
            h[0] += n
        elif e.kind == "B":  # its activations now serve the W only
            h[0], h[1] = h[0] - n, h[1] + n
        else:
            h[1] -= n
        states[e.stage].append((h[0], h[1]))
    return [_pareto(row) for row in states]


def _pareto(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for f, w in sorted(set(pairs), reverse=True):
        if not out or w > out[-1][1]:
            out.append((f, w))
    return out


def state_bytes_per_param(t: Training, dp: int) -> tuple[float, float, float]:
    """(weights, grads, optimizer) bytes per parameter after ZeRO partitioning."""
    # Rajbhandari et al. 2020 §3: mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes/param;
    # plain fp32 Adam 4 + 4 + 8. ZeRO-1 shards optimizer, -2 also grads, -3 also weights (§5).
    w, g, o = (4.0, 4.0, 8.0) if t.dtype == "fp32" else (2.0, 2.0, 12.0)
    return (
        w / dp if t.zero >= 3 else w,
        g / dp if t.zero >= 2 else g,
        o / dp if t.zero >= 1 else o,
    )


def stage_memory(
    m: ModelSpec,
    t: Training,
    par: tuple[int, int, int],
    chunks: int,
    head_stage: int,
    inflight: list[int],
    layers: list[list[int]] | None = None,
    held: list[int] | None = None,
    ends: list[list[tuple[bool, bool]]] | None = None,
    frontier: list[list[tuple[int, int]]] | None = None,
    params: list[int] | None = None,
) -> list[StageMemory]:
    """Memory per rank of each stage; ``par`` = (dp, tp, pp), ``inflight`` from the schedule.

    ``layers[rank][chunk]`` is the split (default: even); ``held`` the peak layer-micro-batches
    of activations each rank keeps (simulate.peak_held), which with unequal chunks depends on
    which chunks are in flight at the peak; by default inflight times the rank's largest chunk.
    ``frontier`` (held_frontier, split-backward schedules) replaces both: the peak of what F's
    keep for their B plus what B's keep for their W, at w_pass_share bytes per layer.
    ``params``: rank_params, where the caller has it already (the planner's cache).
    """
    dp, tp, pp = par
    w, g, o = state_bytes_per_param(t, dp)
    act_layer = activation_bytes_per_layer(m, t, tp)
    layers = layers or even_chunk_layers(m, pp, chunks)
    w_share = w_pass_share(m, t, tp) if frontier is not None else 0.0
    params_of, out = params, []
    for stage in range(pp):
        row_ends = ends[stage] if ends else None
        params = (
            params_of[stage]
            if params_of
            else stage_params(m, stage, pp, tp, chunks, head_stage, layers[stage], row_ends)
        )
        kept = held[stage] if held is not None else inflight[stage] * max(layers[stage])
        if frontier is not None:  # split backward: a W's activations stay from its B on
            kept = max(f + w_share * w for f, w in frontier[stage])
        if t.recompute_layers is not None:  # a partly recomputed stage: its own mix
            act_layer = chunk_activation_bytes(m, t, tp, max(layers[stage]))
        act = act_layer * kept
        holds_head = any(head for _, head in row_ends) if row_ends else stage == head_stage
        if holds_head:
            # Korthikanti et al. 2022 §4.3: output logits in fp32, 4sbV/t, for one micro-batch.
            act += 4.0 * m.seq_len * t.micro_batch_size * m.vocab / tp
        parts = (params * w, params * g, params * o, act)
        out.append(StageMemory(stage, params, *parts, layers=tuple(layers[stage])))
    return out
