"""One step's cost: the pipeline's makespan (simulated or closed form), then the gradient
sync that the backward did not hide, then the optimizer step."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost import comm, compute, overlap
from app.core.cost.training import Training
from app.core.hardware import HardwareSpec
from app.core.simulate import Durations
from app.core.topology import Layout


@dataclass(frozen=True)
class Tail:
    dp_total_s: float  # the gradient sync (and ZeRO-3's reduce-scatter) on its own
    dp_s: float  # what of it is exposed after the pipeline drains
    optim_s: float


def grad_sync_s(rank_params: int, t: Training, layout: Layout, hw: HardwareSpec) -> float:
    """The DP gradient sync: all-reduce (ZeRO 0-2, same volume as reduce-scatter + all-gather)
    or, under ZeRO-3, one reduce-scatter; its weight gathers live in the chunk durations."""
    if t.forward_only or layout.dp == 1:
        return 0.0
    place = comm.placement(layout, "dp", hw.domain_size)
    grads = rank_params * t.element_bytes
    buckets = max(1, -(-rank_params // overlap.BUCKET_PARAMS))
    if t.zero >= 3:
        return comm.all_gather_s(grads, place, hw, messages=buckets)
    return comm.all_reduce_s(grads, place, hw, messages=buckets)


def tail(
    rank_params: int,
    t: Training,
    layout: Layout,
    hw: HardwareSpec,
    durations: list[list[Durations]] | list[Durations],
    chunks: int,
) -> Tail:
    """``durations``: per rank and chunk (durations.stage_durations), or one per rank."""
    total = grad_sync_s(rank_params, t, layout, hw)
    # Stage 0 finishes its backward last, so its last backward is the window that counts:
    # through all its chunks, so their mean times chunks is the window.
    first = durations[0]
    first = first if isinstance(first, Durations) else Durations.mean(first)
    dp_s = overlap.exposed_grad_sync_s(total, rank_params, first, chunks, t.overlap_grad_reduce)
    optim = 0.0 if t.forward_only else compute.optimizer_seconds(rank_params, t, layout.dp, hw)
    return Tail(total, dp_s, optim)
