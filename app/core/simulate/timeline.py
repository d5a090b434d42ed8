"""Turn per-rank action lists plus durations into a timeline.

Each rank runs its actions in the listed order. An action starts when its rank is free and
its dependencies are done: F waits for the previous virtual stage's F (plus p2p time when
that stage lives on another rank); B waits for its own F and for the next virtual stage's
B (plus p2p); W waits for its own B. The start times are the unique earliest ones this
order allows, found in one pass (O(actions); simulate_pass.py).

An output reaches another rank when its *unit* ends. A unit is one action, except in
DualPipeV: torch's runtime (torch/distributed/pipelining/schedules.py, OVERLAP_F_B) and
DeepSeek's dualpipev.py run an overlapped pair, a forward and a whole backward (B then its W)
of the other chunk, as one action that starts once both inputs are in and sends both outputs
when it ends. With F = B = W this gives DeepSeek-V3's bubble, (p-1)(F&B + B - 3W) per rank
(arXiv 2412.19437 Table 2, B = a whole backward, F&B = an overlapped pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, groupby, repeat
from operator import itemgetter
from typing import NamedTuple, TypeAlias

from app.core.schedules import (
    FORWARD_ONLY,
    RELEASE_BY_UNIT,
    Action,
    ScheduleName,
    chunks_per_rank,
)
from app.core.schedules.deadlock import check_simulated, dry_run
from app.core.simulate.passes import Pass, plain_pass, unit_pass
from app.core.support.gc_pause import gc_paused


@dataclass(frozen=True)
class Durations:
    """Seconds (or abstract units) per action, per chunk. W = 0 when backward is not split."""

    f: float = 1.0
    b: float = 1.0
    w: float = 0.0
    p2p: float = 0.0
    # One overlapped F&B pair whose forward is this chunk's (DualPipe(V)); None: F + B + W.
    fb: float | None = None

    def of(self, kind: str, split: bool) -> float:
        if kind == "F":
            return self.f
        if kind == "B":
            return self.b if split else self.b + self.w
        return self.w

    @staticmethod
    def mean(ds: Sequence[Durations]) -> Durations:
        """Field-wise mean: a rank's chunks as one representative chunk (same totals)."""
        n = len(ds)
        return Durations(*(sum(getattr(d, f) for d in ds) / n for f in ("f", "b", "w", "p2p")))


# One Durations for every action, one per pipeline rank, or one per rank per chunk
# (layers[rank][chunk] of an uneven split: each chunk's F/B/W scale with its own layers).
DurationsLike: TypeAlias = Durations | Sequence[Durations] | Sequence[Sequence[Durations]]


def per_chunk(durations: DurationsLike, pp: int, chunks: int) -> list[list[Durations]]:
    """``durations`` as durations[rank][chunk], whichever of the three shapes it came in."""
    if isinstance(durations, Durations):
        return [[durations] * chunks for _ in range(pp)]
    rows = [[d] * chunks if isinstance(d, Durations) else list(d) for d in durations]
    if len(rows) != pp or any(len(row) != chunks for row in rows):
        raise ValueError(f"durations must be one per rank ({pp}) or per rank and chunk ({chunks})")
    return rows


class Event(NamedTuple):
    """One simulated action; a NamedTuple because timelines hold hundreds of thousands."""

    stage: int  # pipeline rank (pp coordinate)
    kind: str
    microbatch: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class Timeline:
    """A simulated step. Times are kept per rank in execution order; ``events`` makes one
    Event per action on first use, since callers that read only the summary (the planner,
    sweeps, compare) would otherwise allocate hundreds of thousands for nothing."""

    actions: list[list[Action]]
    starts: list[list[float]]
    ends: list[list[float]]
    makespan: float
    bubble_fraction: float
    bubble_over_ideal: float
    peak_inflight: list[int]
    busy: list[float] = field(default_factory=list)

    @cached_property
    @gc_paused  # hundreds of thousands of acyclic tuples, as in simulate
    def events(self) -> list[Event]:
        """Every action with its times, grouped by rank, each rank's in execution order."""
        make, out = tuple.__new__, []  # an Event without NamedTuple's Python-level __new__
        times = zip(self.actions, self.starts, self.ends, strict=True)
        for rank, (row, st, en) in enumerate(times):
            if row:
                kinds, mbs, chunks = zip(*row, strict=True)
                out.extend(map(make, repeat(Event), zip(repeat(rank), kinds, mbs, chunks, st, en)))
        return out


@gc_paused
def simulate(
    name: ScheduleName | str,
    actions: list[list[Action]],
    durations: DurationsLike,
    virtual_stages: int = 1,
    plans: list | None = None,
    cache: dict | None = None,
) -> Timeline:
    """Simulate; ``durations``: one Durations, one per pipeline rank, or one per rank and
    chunk (see ``per_chunk``); ``plans``: for a schedule released by unit, each rank's
    schedules.units.unit_plan where the caller keeps them (they read the actions alone);
    ``cache``: a dict of a caller whose actions for one (name, pp, microbatches, v) are
    always the same (one plan's), keeping what those alone decide (passes._skeleton)."""
    name = ScheduleName(name)
    pp, chunks = len(actions), chunks_per_rank(name, virtual_stages)
    # Row by row: one C call over every action would hold the GIL for 10+ ms at p=32, m=4096.
    m = 1 + max((max(map(itemgetter(1), row)) for row in actions if row), default=0)
    nvs = pp * chunks
    chunk_d = per_chunk(durations, pp, chunks)
    try:
        done = (unit_pass if name in RELEASE_BY_UNIT else plain_pass)(
            name, actions, chunk_d, m, nvs, plans, cache
        )
    except (IndexError, KeyError):  # a chunk the rank lacks, an unknown kind: the dry run says
        dry_run(name, actions, virtual_stages)
        raise
    check_simulated(name, actions, virtual_stages, done.pos, done.ended, done.ops)
    return _summarise(name, actions, done)


def _summarise(name: ScheduleName, actions, done: Pass) -> Timeline:
    pp, busy = len(actions), done.busy
    makespan = max((en[-1] for en in done.ends if en), default=0.0)  # ends never decrease
    idle = pp * makespan - sum(busy)
    ideal = max(busy, default=0.0)
    return Timeline(
        actions=actions,
        starts=done.starts,
        ends=done.ends,
        makespan=makespan,
        # Narayanan et al. 2021 §2.2.1: bubble = idle / total device time in the pipeline.
        bubble_fraction=idle / (pp * makespan) if makespan > 0 else 0.0,
        # Megatron's convention (same paper, eq. for t_pb / t_id = (p-1)/m): over ideal time.
        bubble_over_ideal=(makespan - ideal) / ideal if ideal > 0 else 0.0,
        peak_inflight=_peak_inflight(name, actions, done.peak),
        busy=busy,
    )


def _peak_inflight(name: ScheduleName, actions: list[list[Action]], peak: list[int]) -> list[int]:
    """Forwards whose activations are still held, in chunk-microbatches, per rank: the pass's
    peak of F - B so far.

    Counted from F to B; what a split backward's W still needs from its B on is counted apart
    (cost/memory.held_frontier). A forward-only schedule keeps no autograd graph: 1 at a time.
    """
    if name in FORWARD_ONLY:
        return [1 if row else 0 for row in actions]
    return peak


def peak_held(name: ScheduleName | str, events: list[Event], layers: list[list[int]]) -> list[int]:
    """Peak layer-micro-batches of activations per rank: the in-flight forwards of
    ``_peak_inflight``, each weighted by its chunk's layers (layers[rank][chunk]). With unequal
    chunks the peak depends on which chunks are in flight, not only on how many."""
    pp = len(layers)
    if ScheduleName(name) in FORWARD_ONLY:
        return [max(row) for row in layers]
    held, peak = [0] * pp, [0] * pp
    # One stage's run of events at a time, its running sum in C (accumulate). Its largest
    # value comes after an F: a B or W never raises what is held.
    for stage, run in groupby(events, itemgetter(0)):  # Event: (stage, kind, mb, chunk, ...)
        n = layers[stage]
        moves = (n[e[3]] if e[1] == "F" else -n[e[3]] if e[1] == "B" else 0 for e in run)
        sums = list(accumulate(moves, initial=held[stage]))
        held[stage], peak[stage] = sums[-1], max(peak[stage], *sums)
    return peak
