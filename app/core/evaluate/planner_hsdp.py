"""HSDP in the planner's search (issue 27): a ZeRO-3 candidate (plain FSDP over all of dp)
is tried again sharded over smaller groups of dp_shard data-parallel ranks, the dp / dp_shard
groups replicas that all-reduce their gradient shards (torch FSDP2 on a 2D (replicate, shard)
mesh; torchtitan data_parallel_shard_degree; cost/comm.py and cost/step.py price it).

A smaller shard group holds more of the model per GPU (memory.stage_memory divides the
states by dp_shard) and gathers over fewer ranks: inside one NVLink domain at its bandwidth,
across domains at one NIC share per GPU whatever the group's size (comm.sharded_nics), so
there a smaller group saves ring latency steps (comm.ring_latency_s) and pays the replicas'
all-reduce of grads / dp_shard. Of the divisors of dp, up to three are tried per mesh (the
ends of each link class, a heuristic like planner_axes' ep; tests/core/test_planner_hsdp.py
checks cases against every divisor):
- the largest group inside one domain, if it fits (the fastest gathers there);
- the smallest group across domains whose lightest candidate fits, and the next larger one
  (room for selective recompute or a larger micro-batch the smallest cannot hold);
each kept only where its probe (1F1B, micro-batch 1, full recompute, the lightest ZeRO-3
candidate) is faster than plain FSDP's: the probe prices the gathers and the gradient sync
that dp_shard changes. A mesh whose plain FSDP probe does not fit has no HSDP row either.

To keep issue 27's time budget, only candidates that could rank near the top are priced:
a ZeRO-3 candidate that fits is tried at a dp_shard when its speed times that probe gain
reaches the HSDP_TRIED-th fitting candidate's (planner.plan adds them after ranking), and
kept only where it is faster than the same candidate as plain FSDP, which holds less.
"""

from __future__ import annotations

from dataclasses import replace

from app.core.cost import comm
from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import Candidate, _divisors, knobs

Mesh = tuple[int, int, int, int, int]  # dp, tp, pp, cp, ep
Ranked = list[tuple[float, float, Candidate]]  # (closed-form tokens/s, peak bytes, candidate)
# Of the ZeRO-3 candidates, those whose estimate (their tokens/s times their mesh's probe
# gain) reaches the speed of this many-th fitting candidate are priced with HSDP: four times
# the planner's shortlist (as planner_fp8.FP8_TRIED), which is drawn from the first 24.
HSDP_TRIED = 96


def _probe(closed: Pass, mesh: Mesh, dp_shard: int | None) -> Candidate:
    dp, tp, pp, cp, ep = mesh
    on = knobs(closed.m, tp, dp, 3)
    return Candidate(dp, tp, pp, "1f1b", 1, 1, 3, "full", **on, cp=cp, ep=ep, dp_shard=dp_shard)


def inside(closed: Pass, mesh: Mesh, d: int) -> bool:
    """Whether a shard group of ``d`` DP ranks (with their CP ranks) is inside one domain."""
    layout = _probe(closed, mesh, None).layout(closed.hw.gpus_per_node)
    return comm.shard_placement(layout, closed.hw.domain_size, d).domains == 1


def shard_sizes(closed: Pass, mesh: Mesh) -> list[tuple[int, float]]:
    """The dp_shard below dp searched on ``mesh`` (the module's note), each with its probe's
    speed over plain FSDP's (above 1: only those are kept); [] for none."""
    dp = mesh[0]
    if dp < 4:  # dp_shard = 1 is no sharding (ZeRO-0's replicas); dp = 2 has only FSDP
        return []
    fsdp = _probe(closed, mesh, None)
    if closed.peak(fsdp) > closed.capacity:
        return []
    sizes = _divisors(dp)[1:-1]
    within = [d for d in sizes if inside(closed, mesh, d)]
    across = [d for d in sizes if d not in within]
    picked = [*_smallest_fitting(closed, mesh, within[::-1])[:1]]
    picked += _smallest_fitting(closed, mesh, across)[:2]
    base = closed.tokens_per_s(fsdp)
    gains = [(d, closed.tokens_per_s(_probe(closed, mesh, d)) / base) for d in sorted(picked)]
    return [(d, g) for d, g in gains if g > 1.0]


def _smallest_fitting(closed: Pass, mesh: Mesh, sizes: list[int]) -> list[int]:
    """``sizes`` (ascending, or descending for the domain's largest) from the first whose
    probe fits on: a larger shard group never holds more (memory.stage_memory divides the
    states by dp_shard), so a bisection finds it."""
    if not sizes:
        return []
    if sizes[0] > sizes[-1]:  # the largest inside a domain: it fits or none there does
        fits = closed.peak(_probe(closed, mesh, sizes[0])) <= closed.capacity
        return sizes[:1] if fits else []
    lo, hi = 0, len(sizes)
    while lo < hi:
        mid = (lo + hi) // 2
        if closed.peak(_probe(closed, mesh, sizes[mid])) <= closed.capacity:
            hi = mid
        else:
            lo = mid + 1
    return sizes[lo:]


def variants(closed: Pass, fitting: Ranked, tried: int) -> Ranked:
    """The HSDP variants of the ZeRO-3 candidates of ``fitting`` (plain FSDP, ranked) that
    fit and that their mesh's probe gain (shard_sizes) could lift to the speed of the
    ``tried``-th candidate or above; each priced by the closed-form pass."""
    if not fitting:
        return []
    bar = fitting[min(tried, len(fitting)) - 1][0]
    sizes: dict[Mesh, list[tuple[int, float]]] = {}
    pool, fsdp = [], []
    for tokens, _, c in fitting:
        if c.zero != 3 or c.dp_shard is not None or c.dp < 4:
            continue
        mesh = (c.dp, c.tp, c.pp, c.cp, c.ep)
        if mesh not in sizes:
            sizes[mesh] = shard_sizes(closed, mesh)
        more = [replace(c, dp_shard=d) for d, gain in sizes[mesh] if tokens * gain >= bar]
        pool, fsdp = pool + more, fsdp + [tokens] * len(more)
    # A variant no faster than its plain FSDP self (which holds less) is no answer.
    priced = zip(pool, closed.peaks(pool), fsdp, strict=True)
    return [
        (tokens, p, c)
        for c, p, plain in priced
        if p <= closed.capacity and (tokens := closed.tokens_per_s(c)) > plain
    ]  # fmt: skip
