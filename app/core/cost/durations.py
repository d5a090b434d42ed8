"""F, B and W of every chunk on each pipeline rank, in seconds: compute from cost.compute, the
TP collectives inside each layer, and ZeRO-3's parameter gathers where they are not hidden."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.core.cost import comm, compute, fp8
from app.core.cost.memory import chunk_params, layer_tensors
from app.core.cost.overlap import exposed_gather_s, exposed_tp_s, overlapped_pair_s
from app.core.cost.shapes import even_chunk_layers, logits_gemm, rank_tokens
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.simulate import Durations


@dataclass(frozen=True)
class LayerCost:
    """One layer, one micro-batch, one TP rank: seconds of each pass."""

    f: float  # forward compute
    b: float  # input-gradient compute
    w: float  # weight-gradient GEMMs
    tp: float  # TP collectives in one pass (forward, or input-gradient backward)
    recompute: float  # extra forward work in the backward
    a2a: float = 0.0  # of f and b: the MoE dispatch and combine, which DualPipe's pairs hide


def layer_cost(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout) -> LayerCost:
    tp = layout.tp
    gemm = compute.layer_gemm_seconds(m, hw, t, tp)
    cast_f = cast_b = 0.0  # FP8's casts to FP8 (cost/fp8.py), memory-bound, outside the GEMMs
    if t.fp8 != "none":
        gemm, cast_f, cast_b = fp8.layer_seconds(m, hw, t, tp)
        gemm += compute.host_overhead_s(compute.LAYER_GEMM_KERNELS, hw)
    attn_f, attn_b = compute.attention_seconds(m, hw, t, tp)
    ew = compute.hbm_seconds(compute.elementwise_bytes(m, t, tp), hw)
    tp_s = 0.0
    if tp > 1:  # Shoeybi et al. 2019 §3: two all-reduces (or AG + RS) per layer and pass
        place = comm.placement(layout, "tp", hw.domain_size)
        tp_s = tp_collectives(m, t) * comm.all_reduce_s(comm.tp_message_bytes(m, t), place, hw)
        if t.tp_comm_overlap:
            tp_s = exposed_tp_s(tp_s, gemm, tp)
    ring_f, ring_b = cp_ring_s(m, hw, t, layout, attn_f, attn_b)
    attn_f, attn_b = attn_f + ring_f, attn_b + ring_b
    # A mixture of experts: each MoE layer's dispatch and combine all-to-alls, exposed, in
    # F and (transposed) in B; the mean layer carries moe_layers/layers of them.
    # Expert TP's all-gather and reduce-scatter of the routed rows come with them (moe_etp_s).
    # The token shuffles around them move the same bytes in F and B (moe_permute_bytes).
    a2a = shuffle = 0.0
    if m.experts:
        moe = comm.moe_a2a_s(m, hw, t, layout) + comm.moe_etp_s(m, hw, t, layout)
        a2a = moe * m.moe_layers / m.layers
        shuffle = compute.hbm_seconds(compute.moe_permute_bytes(m, t, tp), hw)
    f = gemm + attn_f + ew + shuffle + a2a + cast_f
    if t.recompute == "full":
        extra = f + tp_s  # Chen et al. 2016: the whole forward again, collectives included
    elif t.recompute == "selective" and not t.flash_attention:
        extra = attn_f  # Korthikanti et al. 2022 §5: QK^T, softmax, dropout and AV again
    else:
        extra = 0.0  # flash attention's backward already recomputes the scores (attn_b)
    # Qi et al. 2024 §2: the backward is an input-gradient pass (B) and a weight-gradient
    # pass (W), each one GEMM per forward GEMM; elementwise backward reads and writes twice.
    b = gemm + attn_b + 2 * ew + shuffle + a2a + cast_b
    return LayerCost(f=f, b=b, w=gemm, tp=tp_s, recompute=extra, a2a=a2a)


def tp_collectives(m: ModelSpec, t: Training) -> float:
    """Dense-TP collectives per layer and pass, the mean layer's: attention's, and the MLP's
    on dense layers. A MoE layer's tokens enter and leave the all-to-all dispatcher in their
    sequence-parallel shards (Megatron-LM moe_layer.py, token_dispatcher.py: the expert side
    gathers over expert TP, comm.moe_etp_s), so only its shared experts gather and
    reduce-scatter over TP (shared_experts.py SharedExpertMLP). Without SP every TP rank
    holds all tokens and the MLP's all-reduce is kept (Megatron refuses that in training)."""
    if not m.experts or m.shared_experts or not t.sequence_parallel:
        return 2.0
    return 2.0 - m.moe_layers / m.layers


def cp_ring_s(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, attn_f: float, attn_b: float
) -> tuple[float, float]:
    """(forward, backward) exposed seconds of one layer's CP ring: cp - 1 steps, each passing
    a K/V block to the next rank while attention runs on the block in hand, so a step is
    exposed only by what its transfer outlasts 1/cp of the attention (Liu et al. 2023, Ring
    Attention §3; TransformerEngine's p2p context parallelism). The backward passes K/V again
    and their gradients back: twice the bytes. Under cp_comm allgather or a2a, the exchange
    is a collective outside attention, exposed whole (comm.cp_collective_s)."""
    cp = layout.cp
    if cp == 1:
        return 0.0, 0.0
    if t.cp_comm != "p2p":  # gathered or all-to-all'd before attention: nothing overlaps it
        return comm.cp_collective_s(m, hw, t, layout)
    crosses = comm.placement(layout, "cp", hw.domain_size).domains > 1
    hop = comm.p2p_s(comm.cp_kv_bytes(m, t, layout.tp), crosses, hw)
    hop_b = comm.p2p_s(2 * comm.cp_kv_bytes(m, t, layout.tp), crosses, hw)
    return (cp - 1) * max(0.0, hop - attn_f / cp), (cp - 1) * max(0.0, hop_b - attn_b / cp)


def _head(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> tuple[float, float]:
    """(forward, weight-gradient) seconds of the output layer and loss on the last stage."""
    logits = compute.gemm_seconds(logits_gemm(m, rank_tokens(m, t), tp), hw, t.element_bytes)
    return compute.head_seconds(m, hw, t, tp), logits


def embedding_seconds(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout
) -> tuple[float, float]:
    """(forward, weight-gradient) seconds of the input embedding on virtual stage 0."""
    tables = 2 if m.learned_positions else 1
    rows = rank_tokens(m, t) * m.hidden * t.element_bytes * tables
    # Megatron-LM tensor_parallel/layers.py VocabParallelEmbedding: each TP rank reads the
    # rows of its vocabulary slice and writes b x s x h, then the partial outputs are
    # all-reduced over TP (reduce-scattered under sequence parallel: mappings.py).
    forward = compute.hbm_seconds(2 * rows, hw)
    if layout.tp > 1:
        place = comm.placement(layout, "tp", hw.domain_size)
        collective = comm.all_gather_s if t.sequence_parallel else comm.all_reduce_s
        forward += collective(comm.tp_message_bytes(m, t), place, hw)
    # Its weight gradient is a scatter-add of the b x s x h output gradient into the table:
    # read the gradient, read and write the rows (torch embedding_dense_backward).
    return forward, compute.hbm_seconds(3 * rows, hw)


def _gather_s(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, params: int, layers: int
) -> float:
    """One chunk's ZeRO-3 parameter all-gather over the DP group (with its CP ranks, which
    shard the same weights: comm.grad_placement), one collective per layer (FSDP wraps each
    transformer block as a unit: Zhao et al. 2023 §3.2); ``params`` = the chunk's whole
    (unsharded by TP) parameters."""
    if t.zero < 3 or comm.shard_ranks(layout, t) == 1:
        return 0.0
    place = comm.shard_placement(layout, hw.domain_size, t.dp_shard)
    nbytes = params / layout.tp * t.gather_bytes  # 1 byte if FP8 (training.py)
    return comm.all_gather_s(nbytes, place, hw, zero3_messages(m, t, layers), sharded=True)


def chunk_durations(
    m: ModelSpec,
    hw: HardwareSpec,
    t: Training,
    layout: Layout,
    chunks: int,
    head_stage: int,
    layers: list[list[int]] | None = None,
    ends: list[list[tuple[bool, bool]]] | None = None,
    pairs: bool = False,
) -> tuple[list[list[Durations]], float]:
    """F/B/W of every chunk, as durations[rank][chunk], and the TP seconds inside one chunk's
    F on the busiest rank (its mean over the rank's chunks).

    ``layers[rank][chunk]`` is the split (default: shapes.default_split, interleaved-placed).
    Each chunk's time is its own layers' time; virtual stage 0 (rank 0, chunk 0 in every
    placement) adds the embedding, the last one (``head_stage``'s last chunk) the head;
    ``ends[rank][chunk]`` = (embedding, head) overrides that (shapes.chunk_ends: DualPipe).
    ``pairs``: the schedule overlaps a chunk's F with the other chunk's whole backward
    (DualPipe(V)); each chunk then also gets ``fb``, that pair's seconds.
    """
    layers = layers or even_chunk_layers(m, layout.pp, chunks)
    cost = layer_cost(m, hw, t, layout)
    crosses = comm.placement(layout, "pp", hw.domain_size).domains > 1
    p2p = comm.pp_hop_s(m, hw, t, layout, crosses) if layout.pp > 1 else 0.0
    head_f, head_w = _head(m, hw, t, layout.tp)
    embed_f, embed_w = embedding_seconds(m, hw, t, layout)
    # A chunk's durations depend only on its layer count, its ends and (tied head) whether it
    # is on rank 0: computed once per kind, since the planner asks for thousands of meshes.
    kinds: dict[tuple[int, bool, bool, bool], Durations] = {}
    out = []
    for stage, row in enumerate(layers):
        durs = []
        for chunk, n in enumerate(row):
            first, last = stage == 0 and chunk == 0, stage == head_stage and chunk == chunks - 1
            first, last = ends[stage][chunk] if ends else (first, last)
            key = (n, first, last, stage == 0)
            if key not in kinds:
                params = chunk_params(m, stage, chunk, head_stage, row, (first, last))
                parts = (cost, p2p, (embed_f, embed_w), (head_f, head_w))
                kinds[key] = _chunk(m, hw, t, layout, n, first, last, params, parts)
            durs.append(kinds[key])
        out.append(_pair_times(durs, [n * (cost.tp + cost.a2a) for n in row]) if pairs else durs)
    tp_pass = max(sum(row) for row in layers) * cost.tp / chunks
    return out, tp_pass


def _chunk(
    m: ModelSpec,
    hw: HardwareSpec,
    t: Training,
    layout: Layout,
    n: int,
    first: bool,
    last: bool,
    params: int,
    parts: tuple,
) -> Durations:
    """One chunk of ``n`` layers, with the embedding (``first``) and the head (``last``)."""
    cost, p2p, (embed_f, embed_w), (head_f, head_w) = parts
    # The head's backward re-reads the logits and runs the input-gradient GEMM: as long as
    # its forward. The embedding has no input gradient, only its W.
    f = n * (cost.f + cost.tp) + (embed_f if first else 0.0) + (head_f if last else 0.0)
    # Under full recompute with recompute_layers (Megatron --recompute-method block), only
    # t.recomputed(n) layers run forward again; the rest kept their activations.
    again = t.recomputed(n) if t.recompute == "full" else n
    b = n * (cost.b + cost.tp) + again * cost.recompute + (head_f if last else 0.0)
    if first and t.recompute == "full" and again:
        # layer_cost's rule (Chen et al. 2016): the chunk's whole forward again. An
        # over-count of microseconds: Megatron checkpoints the transformer layers only.
        b += embed_f
    w = n * cost.w + (embed_w if first else 0.0) + (head_w if last else 0.0)
    gather = _gather_s(m, hw, t, layout, params, n)
    f += exposed_gather_s(gather, f, t.overlap_param_gather)
    b += exposed_gather_s(gather, b + w, t.overlap_param_gather)
    return Durations(f=f, b=b, w=w, p2p=p2p)


def zero3_messages(m: ModelSpec, t: Training, layers: int) -> int:
    """Collectives of one ZeRO-3 gather over ``layers`` layers: one per layer (FSDP), or one
    per parameter tensor (``zero3_per_tensor``: DeepSpeed)."""
    return max(layers, 1) * (layer_tensors(m) if t.zero3_per_tensor else 1)


def _pair_times(durs: list[Durations], comm_s: list[float]) -> list[Durations]:
    """Each chunk's F overlapped with the other chunk's whole backward, the communication
    of each pass (``comm_s``, one pass's: the TP collectives and the MoE dispatch and
    combine, DeepSeek-V3 report §3.2.1 and Figure 4) hidden under the other's compute where
    it fits."""
    if len(durs) != 2:
        return durs
    out = []
    for c, d in enumerate(durs):
        o, c_o = durs[1 - c], comm_s[1 - c]
        fb = overlapped_pair_s(d.f - comm_s[c], comm_s[c], o.b + o.w - c_o, c_o)
        out.append(replace(d, fb=fb))
    return out


def stage_durations(
    m: ModelSpec,
    hw: HardwareSpec,
    t: Training,
    layout: Layout,
    chunks: int,
    head_stage: int,
    layers: list[list[int]] | None = None,
) -> tuple[list[Durations], float]:
    """``chunk_durations`` with each rank's chunks as their mean (the same rank totals): for
    closed forms that take one chunk duration per rank (the planner's first pass)."""
    per_chunk, tp_pass = chunk_durations(m, hw, t, layout, chunks, head_stage, layers)
    return [Durations.mean(row) for row in per_chunk], tp_pass
