"""One step's cost: the pipeline's makespan (simulated or closed form), then the gradient
sync that the backward did not hide, then the optimizer step."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost import comm, compute, expert_tail, overlap
from app.core.cost.expert_tail import ExpertShare
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.simulate import Durations


@dataclass(frozen=True)
class Tail:
    dp_total_s: float  # the gradient sync (and ZeRO-3's reduce-scatter) on its own
    dp_s: float  # what of it is exposed after the pipeline drains
    optim_s: float


def grad_sync_s(
    rank_params: int, t: Training, layout: Layout, hw: HardwareSpec, layers: int = 0
) -> float:
    """The DP gradient sync: all-reduce (ZeRO 0-2, same volume as reduce-scatter + all-gather)
    or, under ZeRO-3, one reduce-scatter; its weight gathers live in the chunk durations.
    ``layers``: the rank's layers; ZeRO-3 then reduce-scatters once per layer, as it gathers
    (FSDP: one reduce-scatter per wrapped block, Zhao et al. 2023 §3.2), else per bucket.
    Under HSDP the reduce-scatter runs in the shard group and each shard is then all-reduced
    over the replicas (torch FSDP2 _fsdp_collectives.foreach_reduce)."""
    if t.forward_only or layout.dp * layout.cp == 1:
        return 0.0
    grads = rank_params * t.grad_bytes
    buckets = max(1, -(-rank_params // overlap.BUCKET_PARAMS))
    if t.zero < 3:
        return comm.all_reduce_s(grads, comm.grad_placement(layout, hw.domain_size), hw, buckets)
    messages = layers or buckets
    place = comm.shard_placement(layout, hw.domain_size, t.dp_shard)
    out = comm.all_gather_s(grads, place, hw, messages=messages, sharded=True)
    n = comm.shard_ranks(layout, t)
    if n < layout.dp * layout.cp:
        replicas = comm.replica_placement(layout, hw.domain_size, t.dp_shard)
        out += comm.all_reduce_s(grads / n, replicas, hw, messages=messages)
    return out


def backward_gather_s(
    rank_params: int, t: Training, layout: Layout, hw: HardwareSpec, messages: int = 0
) -> float:
    """ZeRO-3's weight gather in stage 0's last backward: prefetched or waited for, it holds
    the DP link while that backward runs, so that much of its duration cannot hide the
    gradient reduce-scatter (one link, one transfer at a time: Hockney 1994's beta term is
    per link). ``messages``: its collectives (durations.zero3_messages; 0: one per
    40M-parameter bucket)."""
    if t.zero < 3 or comm.shard_ranks(layout, t) == 1 or t.forward_only:
        return 0.0
    place = comm.shard_placement(layout, hw.domain_size, t.dp_shard)  # as it shards
    messages = messages or max(1, -(-rank_params // overlap.BUCKET_PARAMS))
    return comm.all_gather_s(rank_params * t.gather_bytes, place, hw, messages, sharded=True)


def tail(
    rank_params: int,
    t: Training,
    layout: Layout,
    hw: HardwareSpec,
    durations: list[list[Durations]] | list[Durations],
    chunks: int,
    layers: int = 0,
    gathers: int = 0,
    tensors: int = 0,
    experts: ExpertShare | None = None,
) -> Tail:
    """``durations``: per rank and chunk (durations.stage_durations), or one per rank;
    ``layers``: stage 0's layers (grad_sync_s), ``gathers``: its ZeRO-3 weight gather's
    collectives (backward_gather_s), ``tensors``: the most parameter tensors a rank steps
    (shapes.param_tensors); ``experts``: a mixture of experts' routed weights on that rank
    (expert_tail.share), synced and sharded over their own group."""
    dense = expert_tail.dense_params(rank_params, experts)
    total = grad_sync_s(dense, t, layout, hw, layers)
    total += expert_tail.sync_s(experts, t, layout, hw)
    # Stage 0 finishes its backward last, so its last backward is the window that counts:
    # through all its chunks, so their mean times chunks is the window.
    first = durations[0]
    first = first if isinstance(first, Durations) else Durations.mean(first)
    busy = backward_gather_s(rank_params, t, layout, hw, gathers)
    synced = dense + (experts.held if experts else 0)
    dp_s = overlap.exposed_grad_sync_s(total, synced, first, chunks, t.overlap_grad_reduce, busy)
    shards = comm.shard_ranks(layout, t)
    stepped = expert_tail.optimizer_params(rank_params, experts, t, shards)
    optim = compute.optimizer_seconds(stepped, t, shards, hw, tensors)
    optim = 0.0 if t.forward_only else optim
    return Tail(total, dp_s, optim)
