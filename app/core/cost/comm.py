"""Communication: bytes each rank sends per step on each axis, and seconds per collective in
an alpha-beta model (Hockney 1994) with nccl-tests' bus-bandwidth convention, where a group
that leaves its NVLink domain runs at the NICs its members bring, not one GPU's NIC."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from app.core.cost.shapes import layers_per_chunk, rank_tokens
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout


def ring_factor(n: int) -> float:
    # NCCL tests PERFORMANCE.md: a ring all-reduce moves 2(n-1)/n of the buffer per rank.
    return 2.0 * (n - 1) / n if n > 1 else 0.0


@dataclass(frozen=True)
class Placement:
    """Where one group of an axis sits: its size and how many members share a domain."""

    size: int
    per_domain: int

    @property
    def domains(self) -> int:
        return math.ceil(self.size / self.per_domain)


# Cached: a pure function of a frozen Layout, asked once per candidate by the planner's
# thousands (bench/bench_plan.py), where walking the group's ranks was a fifth of its pass.
@lru_cache(maxsize=1024)
def placement(layout: Layout, axis: str, domain_size: int) -> Placement:
    return _placed(layout.group(axis, 0), domain_size)


def grad_placement(layout: Layout, domain_size: int) -> Placement:
    """The gradient all-reduce's group: the DP ranks, and under context parallelism the CP
    ranks of each too, whose gradients come from other positions of the same sequences
    (Megatron-LM parallel_state.py, the data-parallel group "with context parallel")."""
    return shard_placement(layout, domain_size, None)


def shard_ranks(layout: Layout, t: Training) -> int:
    """The ranks ZeRO shards over: DP with its CP ranks, or under HSDP one shard group's."""
    return (t.dp_shard or layout.dp) * layout.cp


@lru_cache(maxsize=1024)  # as placement
def shard_placement(layout: Layout, domain_size: int, dp_shard: int | None) -> Placement:
    """The group ZeRO gathers and reduce-scatters over: grad_placement's DP x CP ranks, or
    under HSDP the first dp_shard DP ranks' (FSDP2's inner mesh dimension, torch
    fully_shard with a (replicate, shard) mesh, where shard varies fastest)."""
    dp = layout.group("dp", 0)[: dp_shard or layout.dp]
    return _placed({c for d in dp for c in layout.group("cp", d)}, domain_size)


@lru_cache(maxsize=1024)  # as placement
def replica_placement(layout: Layout, domain_size: int, dp_shard: int) -> Placement:
    """HSDP's replicate group: one rank of each shard group, which all-reduce the gradient
    shard they hold (torch FSDP2 _fsdp_collectives.foreach_reduce's all_reduce_group)."""
    return _placed(layout.group("dp", 0)[::dp_shard], domain_size)


def _placed(members: Collection[int], domain_size: int) -> Placement:
    """A group's size and the most of its members any one NVLink domain holds."""
    counts: dict[int, int] = {}
    for r in members:
        counts[r // domain_size] = counts.get(r // domain_size, 0) + 1
    return Placement(len(members), max(counts.values()))


def cp_kv_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """The K and V block one CP rank passes to the next per ring step of a layer's forward:
    its s/cp positions of the kv heads on its TP rank (Megatron-LM / TransformerEngine
    attention with context parallelism, p2p ring; Liu et al. 2023, Ring Attention §3)."""
    return rank_tokens(m, t) * (m.k_dim + m.v_dim) / tp * t.element_bytes


def cp_collective_s(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout
) -> tuple[float, float]:
    """(forward, backward) seconds of one layer's CP exchange when it is a collective, exposed
    before and after attention. allgather: every rank's K/V block gathered, their gradients
    reduce-scattered back (Dubey et al. 2024 §3.3.2: Llama 3's all-gather based CP). a2a: Q,
    K and V all-to-all'd from sequence- to head-sharded and the output back, the backward the
    same four transposed (Jacobs et al. 2023, DeepSpeed-Ulysses §3.1)."""
    place = placement(layout, "cp", hw.domain_size)
    tokens, tp, e = rank_tokens(m, t), layout.tp, t.element_bytes
    if t.cp_comm == "allgather":
        s = all_gather_s(layout.cp * cp_kv_bytes(m, t, tp), place, hw)
        return s, s
    qkvo = tokens * (m.qk_dim + m.k_dim + m.v_dim + m.o_dim) / tp * e
    s = all_to_all_s(qkvo, place, hw, messages=4)
    return s, s


def bus_bandwidth_bps(p: Placement, hw: HardwareSpec, sharded: bool = False) -> float:
    """``sharded``: a ZeRO-3 / FSDP collective (sharded_nics)."""
    e = hw.efficiency
    intra = hw.intra_gbps * 1e9 * e.intra_busbw_fraction
    if p.domains == 1:
        return intra
    # NCCL PERFORMANCE.md: a ring's bus bandwidth is its slowest hop. Rings leave a domain
    # through the NICs of the group's members there (one NIC share per GPU on rail-optimised
    # fabrics), so p.per_domain members bring p.per_domain shares.
    shares = sharded_nics(p) if sharded else p.per_domain
    return min(intra, shares * hw.inter_gbps * 1e9 * e.inter_busbw_fraction)


def sharded_nics(p: Placement) -> int:
    """NIC shares per GPU of a ZeRO-3 / FSDP weight gather or gradient reduce-scatter whose
    group spans domains: its GPU's own, not the node's NICs pooled as a bulk ring pools them.
    A modelling rule, no fitted constant: ZeRO-3 moves all of Ψ over the network on every
    pass (Rajbhandari et al. 2020 §7.2.3) in per-layer collectives issued beside compute;
    measured, DeepSpeed ZeRO-3 holds 66.75 s per step at both 768 and 1,536 GPUs (Narayanan
    et al. 2021 Table 2: bandwidth-bound near one 200 Gb/s NIC per GPU), as do torchtitan's
    FSDP2 A100 rows (docs/performance.md)."""
    return 1 if p.domains > 1 else p.per_domain


def tree_latency_s(p: Placement, hw: HardwareSpec) -> float:
    """An all-reduce's latency: ring steps inside a domain, a tree across domains (NCCL picks
    trees across nodes for small messages: Sanders et al. 2009 double binary trees)."""
    e = hw.efficiency
    inter_steps = math.ceil(math.log2(p.domains)) if p.domains > 1 else 0
    return 2e-6 * ((p.per_domain - 1) * e.intra_latency_us + inter_steps * e.inter_latency_us)


def ring_latency_s(p: Placement, hw: HardwareSpec) -> float:
    """An all-gather's or reduce-scatter's latency: NCCL runs them as rings only, n - 1 steps,
    of which one per domain crosses the network (NCCL docs, Collective Operations)."""
    e = hw.efficiency
    crossings = p.domains if p.domains > 1 else 0
    return 1e-6 * ((p.size - 1 - crossings) * e.intra_latency_us + crossings * e.inter_latency_us)


def all_reduce_s(nbytes: float, p: Placement, hw: HardwareSpec, messages: int = 1) -> float:
    """``nbytes`` all-reduced in ``messages`` collectives (buckets, layers)."""
    if p.size == 1 or nbytes == 0:
        return 0.0
    return ring_factor(p.size) * nbytes / bus_bandwidth_bps(p, hw) + messages * tree_latency_s(
        p, hw
    )


def all_gather_s(
    nbytes: float, p: Placement, hw: HardwareSpec, messages: int = 1, sharded: bool = False
) -> float:
    """All-gather (or reduce-scatter) of ``nbytes`` in all, in ``messages`` collectives:
    (n-1)/n of it moves through every rank. ``sharded``: ZeRO-3's (sharded_nics)."""
    if p.size == 1 or nbytes == 0:
        return 0.0
    # NCCL PERFORMANCE.md: all-gather bus bandwidth = (n-1)/n of the buffer over the time.
    moved = (p.size - 1) / p.size * nbytes / bus_bandwidth_bps(p, hw, sharded)
    return moved + messages * ring_latency_s(p, hw)


def all_to_all_s(nbytes: float, p: Placement, hw: HardwareSpec, messages: int = 1) -> float:
    """All-to-all of an ``nbytes`` buffer per rank: (n-1)/n of it leaves each rank (NCCL
    PERFORMANCE.md, alltoall: busBw = algBw x (n-1)/n, as the all-gather's) inside one domain.
    Across domains each rank sends (n - per_domain)/n of it to peers off its domain, and those
    bytes leave through its own NIC share (inter_gbps), while the (per_domain - 1)/n for its
    domain's peers go over the scale-up links at the same time: not the ring's pooled NICs
    (bus_bandwidth_bps), since every member of an all-to-all sends its own bytes off-node.
    Measured: DeepEP README (deepseek-ai/DeepEP 0297fc80, Performance), SM90 with CX7, EP 8x4:
    61 GB/s logical of which 3/4 is remote, ~46 GB/s over RDMA, one 400 Gb/s NIC's share."""
    if p.domains == 1:
        return all_gather_s(nbytes, p, hw, messages)
    e = hw.efficiency
    intra = nbytes * (p.per_domain - 1) / p.size / (hw.intra_gbps * 1e9 * e.intra_busbw_fraction)
    inter = (
        nbytes * (p.size - p.per_domain) / p.size / (hw.inter_gbps * 1e9 * e.inter_busbw_fraction)
    )
    return max(intra, inter) + messages * ring_latency_s(p, hw)


def moe_a2a_buffer_bytes(m: ModelSpec, t: Training, routed_by: int = 1) -> float:
    """One MoE layer's dispatch plus combine buffers of one rank in one pass: its b x s/cp
    tokens, top_k copies each, h wide (Megatron-LM transformer/moe/token_dispatcher.py
    MoEAlltoAllTokenDispatcher: token_permutation's all_to_all, then token_unpermutation's
    all_to_all back). The backward sends the same two transposed. ``routed_by``: the ranks
    that split those tokens before routing (moe_source_split)."""
    tokens = t.micro_batch_size * m.seq_len // t.cp
    return 2.0 * tokens * m.top_k * m.hidden * t.element_bytes / routed_by


def moe_source_split(t: Training, tp: int) -> int:
    """Ranks among which one TP group's tokens are split before the dispatch: under sequence
    parallel each TP rank routes its own tokens/tp shard (token_dispatcher.py:
    dispatch_preprocess permutes the rank's local hidden states; moe_layer.py refuses MoE
    with TP but no SP in training, and etp other than tp needs SP: parallel_axes._check_etp);
    without SP every TP rank holds the group's whole b x s/cp tokens."""
    return tp if t.sequence_parallel and tp > 1 else 1


def moe_etp_s(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout) -> float:
    """One MoE layer's expert-TP all-gather after the dispatch and reduce-scatter before the
    combine in one pass (token_dispatcher.py MoEAlltoAllTokenDispatcher: dispatch_postprocess
    gather_from_sequence_parallel_region and combine_preprocess
    reduce_scatter_to_sequence_parallel_region over the expert-TP group), each of etp shards
    of the received rows; none at etp = 1, nor without SP (each rank then holds them all)."""
    etp = layout.expert_tp
    if not m.experts or etp == 1 or moe_source_split(t, layout.tp) == 1:
        return 0.0
    place = placement(layout, "etp", hw.domain_size)
    # One direction's rows, etp shards of them gathered; the combine reduce-scatters as many.
    gathered = etp * moe_a2a_buffer_bytes(m, t, layout.tp) / 2
    return 2 * all_gather_s(gathered, place, hw)


def moe_a2a_sent_bytes(m: ModelSpec, t: Training, ep: int, routed_by: int = 1) -> float:
    """What those two all-to-alls move off the rank: the (ep-1)/ep routed to other ranks."""
    return moe_a2a_buffer_bytes(m, t, routed_by) * (ep - 1) / ep


def moe_a2a_s(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout) -> float:
    """Seconds of one MoE layer's dispatch and combine in one pass over the EP group (the
    group of rank 0: layout.group("ep", 0)), not overlapped with compute."""
    if not m.experts or layout.ep == 1:
        return 0.0
    place = placement(layout, "ep", hw.domain_size)
    routed_by = moe_source_split(t, layout.tp)
    return all_to_all_s(moe_a2a_buffer_bytes(m, t, routed_by), place, hw, messages=2)


def p2p_s(nbytes: float, crosses_domain: bool, hw: HardwareSpec) -> float:
    e = hw.efficiency
    if crosses_domain:
        bw, lat = hw.inter_gbps * e.inter_busbw_fraction, e.inter_latency_us
    else:
        bw, lat = hw.intra_gbps * e.intra_busbw_fraction, e.p2p_latency_us or e.intra_latency_us
    # Hockney's alpha-beta model (Hockney 1994): latency plus bytes over bandwidth.
    return nbytes / (bw * 1e9) + lat * 1e-6


def activation_message_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """What one TP rank sends across a stage boundary per micro-batch: the b x s x h
    activation (or its gradient), 1/t of it when split over TP."""
    full = rank_tokens(m, t) * m.hidden * t.element_bytes
    # Narayanan et al. 2021 §4.1 scatter/gather: each TP rank sends 1/t (with SP, its own
    # sequence shard; without, Megatron's scatter_gather_tensors_in_pipeline split).
    return full / tp if pp_split(t, tp) else full


def pp_split(t: Training, tp: int) -> bool:
    return tp > 1 and (t.sequence_parallel or t.pp_scatter_gather)


def pp_gather_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """The activation the receiving stage all-gathers over TP after a split send without SP
    (Megatron-LM p2p_communication.py gather_split_1d_tensor); 0 when nothing is gathered."""
    if not pp_split(t, tp) or t.sequence_parallel:
        return 0.0  # with SP the sequence stays split: the next layer's all-gather takes it
    return rank_tokens(m, t) * m.hidden * t.element_bytes


def pp_hop_s(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, crosses: bool) -> float:
    """One stage-boundary hop: each TP rank's send, then the receiver's TP all-gather when
    the send was split without SP (Megatron-LM p2p_communication.py)."""
    hop = p2p_s(activation_message_bytes(m, t, layout.tp), crosses, hw)
    gather = pp_gather_bytes(m, t, layout.tp)
    if not gather:
        return hop
    return hop + all_gather_s(gather, placement(layout, "tp", hw.domain_size), hw)


def tp_bytes_per_layer_pass(m: ModelSpec, t: Training, tp: int) -> float:
    """Bytes one rank sends for TP in one layer's forward (or its input-grad backward)."""
    # Shoeybi et al. 2019 §3: two all-reduces per layer per pass (attention and MLP); with
    # sequence parallel each becomes all-gather + reduce-scatter of equal volume (Korthikanti
    # et al. 2022 §4.2.2).
    return 2.0 * ring_factor(tp) * tp_message_bytes(m, t)


def tp_message_bytes(m: ModelSpec, t: Training) -> float:
    return rank_tokens(m, t) * m.hidden * t.element_bytes


def zero3_gathers(t: Training) -> int:
    """Parameter all-gathers per step under ZeRO-3: each micro-batch's forward and backward
    gathers the weights again (Rajbhandari et al. 2020 §5.3; FSDP reshard_after_forward)."""
    return 0 if t.zero < 3 else (1 if t.forward_only else 2) * t.microbatches


def step_comm_bytes(
    m: ModelSpec,
    t: Training,
    layout: Layout,
    chunks: int,
    rank_params: int,
    layers: list[list[int]] | None = None,
) -> dict[str, float]:
    """Bytes one rank sends per step on each axis; ``layers[rank][chunk]`` is the split
    (default: the even one)."""
    if layers is None:
        layers = [[layers_per_chunk(m, layout.pp, chunks, st)] * chunks for st in range(layout.pp)]
    # The busiest rank's layer passes: t.passes per layer, fewer with recompute_layers.
    work = t.microbatches * max(sum(n * t.chunk_passes(n) for n in row) for row in layers)
    tp_b = work * tp_bytes_per_layer_pass(m, t, layout.tp) if layout.tp > 1 else 0.0
    # Each micro-batch crosses each of the rank's chunk boundaries forward and backward.
    crossings = 1.0 if t.forward_only else 2.0
    pp_b = crossings * t.microbatches * chunks * activation_message_bytes(m, t, layout.tp)
    pp_b = pp_b if layout.pp > 1 else 0.0
    grad = 0.0 if t.forward_only else rank_params * t.grad_bytes
    # Rajbhandari et al. 2020 §7: gradients move 2Ψ(n-1)/n as an all-reduce does (ZeRO-1/2 as
    # reduce-scatter + all-gather); ZeRO-3 reduce-scatters them once, Ψ(n-1)/n, and gathers
    # the weights twice per micro-batch.
    n = shard_ranks(layout, t)  # the shard group: DP x CP, or an HSDP group's
    if t.zero >= 3:
        dp_b = (n - 1) / n * rank_params * t.gather_bytes * zero3_gathers(t) + grad * (n - 1) / n
        replicas = layout.dp * layout.cp // n
        dp_b += grad / n * ring_factor(replicas)  # HSDP: the shard's all-reduce over replicas
    else:
        dp_b = grad * ring_factor(n)
    return {"tp_bytes": tp_b, "pp_bytes": pp_b, "dp_bytes": dp_b}
