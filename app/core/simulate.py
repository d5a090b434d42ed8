"""Turn per-rank action lists plus durations into a timeline.

Each rank runs its actions in the listed order. An action starts when its rank is free and
its dependencies are done: F waits for the previous virtual stage's F (plus p2p time when
that stage lives on another rank); B waits for its own F and for the next virtual stage's
B (plus p2p); W waits for its own B. The start times are the unique earliest ones this
order allows, found in one pass with a wait list (O(actions)).

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
from functools import reduce
from itertools import chain, repeat
from operator import add, itemgetter, sub
from typing import NamedTuple, TypeAlias

from app.core.deadlock import DeadlockError as DeadlockError  # re-exported: callers catch it
from app.core.deadlock import check_simulated, dry_run
from app.core.gc_pause import gc_paused
from app.core.schedules import (
    FORWARD_ONLY,
    RELEASE_BY_UNIT,
    Action,
    ScheduleName,
    chunks_per_rank,
    stage_location,
    stages_per_copy,
    virtual_stage,
)
from app.core.simulate_units import run_units, with_release


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
    events: list[Event]  # grouped by rank, each rank's in execution order
    makespan: float
    bubble_fraction: float
    bubble_over_ideal: float
    peak_inflight: list[int]
    busy: list[float] = field(default_factory=list)


# A compiled action (schedules released by unit) is a tuple (key, dep1, hop1, dep2, hop2,
# duration, release): dep -1 when absent, -2 - key when produced on its own rank (done
# already: the order puts it earlier); hop = p2p time when produced elsewhere; release = the
# keys whose outputs its end sends. key = kind_base + mb * nvs + virtual stage.
_Op = tuple[int, int, float, int, float, float]
# One rank's template of each (kind, chunk): (key, dep1, hop1, dep2, hop2, duration, own1,
# own2) less the micro-batch's mb * nvs; dep None when absent; own: produced on this rank.
_Tmpl = tuple[int, int | None, float, int | None, float, float, bool, bool]


def _templates(name, rank, ds, split, m, nvs) -> dict[str, list[_Tmpl]]:
    """Per kind, per chunk of one rank: what each of its actions waits for and lasts."""
    pp = nvs // len(ds)
    home = [stage_location(name, vs, pp)[0] for vs in range(nvs)]  # rank of each stage
    run = stages_per_copy(name, pp, len(ds))  # a micro-batch's stages (DualPipe: one copy)
    b_base, w_base = m * nvs, 2 * m * nvs  # F's base is 0
    out: dict[str, list[_Tmpl]] = {"F": [], "B": [], "W": []}
    for c, d in enumerate(ds):
        vs = virtual_stage(name, rank, c, pp)
        up = vs - 1 if vs % run else None
        down = vs + 1 if (vs + 1) % run else None
        # The hop into a chunk: p2p when its producer is elsewhere.
        up_hop = d.p2p if vs > 0 and home[vs - 1] != rank else 0.0
        down_hop = d.p2p if vs + 1 < nvs and home[vs + 1] != rank else 0.0
        f_own = up is not None and home[up] == rank
        b_own = down is not None and home[down] == rank
        out["F"].append((vs, up, up_hop, None, 0.0, d.of("F", split), f_own, False))
        out["B"].append((b_base + vs, vs, 0.0, None if down is None else b_base + down,
                         down_hop, d.of("B", split), True, b_own))  # fmt: skip
        out["W"].append((w_base + vs, b_base + vs, 0.0, None, 0.0, d.of("W", split), True, False))
    return out


def _compile(name, actions, chunk_d, m, nvs) -> list[list[_Op]]:
    """Actions -> integer keys and static dependencies (who produced a dep never changes),
    for the schedules released by unit (simulate_units.run_units)."""
    pp = len(actions)
    split = any(a.kind == "W" for rank in actions for a in rank)
    out = []
    for rank, row in enumerate(actions):
        tmpl = _templates(name, rank, chunk_d[rank], split, m, nvs)
        ops = []
        for kind, mb, chunk in row:
            ko, d1, h1, d2, h2, dur, own1, own2 = tmpl[kind][chunk]
            at = mb * nvs
            dep1 = -1 if d1 is None else -2 - (at + d1) if own1 else at + d1
            dep2 = -1 if d2 is None else -2 - (at + d2) if own2 else at + d2
            ops.append((at + ko, dep1, h1, dep2, h2, dur))
        out.append(with_release(name, row, ops, rank, pp, chunk_d[rank]))
    return out


@gc_paused
def simulate(
    name: ScheduleName | str,
    actions: list[list[Action]],
    durations: DurationsLike,
    virtual_stages: int = 1,
) -> Timeline:
    """Simulate; ``durations``: one Durations, one per pipeline rank, or one per rank and
    chunk (see ``per_chunk``)."""
    name = ScheduleName(name)
    pp, chunks = len(actions), chunks_per_rank(name, virtual_stages)
    m, nvs = 1 + max(map(itemgetter(1), chain.from_iterable(actions)), default=0), pp * chunks
    chunk_d = per_chunk(durations, pp, chunks)
    try:
        if name in RELEASE_BY_UNIT:
            ops = _compile(name, actions, chunk_d, m, nvs)
            start, end, pos = run_units(ops, 3 * m * nvs)
            rows, busy = _by_rank(ops, actions, start, end), None
        else:
            ops, (rows, busy, end, pos) = None, _run(name, actions, chunk_d, m, nvs)
    except (IndexError, KeyError):  # a chunk the rank lacks, an unknown kind: the dry run says
        dry_run(name, actions, virtual_stages)
        raise
    check_simulated(name, actions, virtual_stages, pos, end, ops)
    return _summarise(name, *_summary(rows, busy))


def _by_rank(ops: list[list[tuple]], actions, start, end) -> list[list[Event]]:
    """Each rank's events in its order, from times by key."""
    make, out = tuple.__new__, []
    for rank, (row, compiled) in enumerate(zip(actions, ops, strict=True)):
        keys = list(map(itemgetter(0), compiled))
        # (rank,) + (kind, mb, chunk) + (start, end), made an Event without NamedTuple's __new__
        times = zip(map(start.__getitem__, keys), map(end.__getitem__, keys), strict=True)
        out.append(list(map(make, repeat(Event), map(add, map(add, repeat((rank,)), row), times))))
    return out


def _summary(rows: list[list[Event]], busy=None) -> tuple[list[Event], list[float], float]:
    """All events grouped by rank, each rank's busy time (summed left to right, event by
    event, unless the run did) and the makespan."""
    if busy is None:
        ends, starts = itemgetter(5), itemgetter(4)
        busy = [reduce(add, map(sub, map(ends, row), map(starts, row)), 0.0) for row in rows]
    makespan = max((row[-1].end for row in rows if row), default=0.0)  # ends never decrease
    return list(chain.from_iterable(rows)), busy, makespan


def _run(name, actions, chunk_d, m, nvs) -> tuple[list[list[Event]], list[float], list, list]:
    """Earliest start of every action given per-rank order: one pass with a wait list, each
    action's key and inputs read from its rank's templates. Returns each rank's events and
    busy time, the end of every key (-1: never ran) and how far each rank got."""
    split = any(a.kind == "W" for rank in actions for a in rank)
    tmpls = [_templates(name, r, chunk_d[r], split, m, nvs) for r in range(len(actions))]
    end = [-1.0] * (3 * m * nvs)
    rows: list[list] = [[None] * len(row) for row in actions]
    pos, free, busy = [0] * len(actions), [0.0] * len(actions), [0.0] * len(actions)
    waiting: dict[int, list[int]] = {}
    ready = list(range(len(actions)))
    make = tuple.__new__  # an Event without NamedTuple's Python-level __new__
    while ready:
        rank = ready.pop()
        row, tmpl, events = actions[rank], tmpls[rank], rows[rank]
        t, i, work = free[rank], pos[rank], busy[rank]
        for i in range(i, len(row)):  # noqa: B020 (resumes where the rank stopped)
            kind, mb, chunk = row[i]
            key, d1, h1, d2, h2, duration, _, _ = tmpl[kind][chunk]
            at, s = mb * nvs, t
            if d1 is not None:
                e = end[at + d1]
                if e < 0:
                    waiting.setdefault(at + d1, []).append(rank)
                    break
                if e + h1 > s:
                    s = e + h1
            if d2 is not None:
                e = end[at + d2]
                if e < 0:
                    waiting.setdefault(at + d2, []).append(rank)
                    break
                if e + h2 > s:
                    s = e + h2
            t = s + duration
            key += at
            end[key] = t
            events[i] = make(Event, (rank, kind, mb, chunk, s, t))
            work += t - s
            if key in waiting:
                ready.extend(waiting.pop(key))
        else:
            i = len(row)
        pos[rank], free[rank], busy[rank] = i, t, work
    return rows, busy, end, pos


def _summarise(name: ScheduleName, events: list[Event], busy: list[float], makespan: float):
    pp = len(busy)
    idle = pp * makespan - sum(busy)
    ideal = max(busy, default=0.0)
    return Timeline(
        events=events,
        makespan=makespan,
        # Narayanan et al. 2021 §2.2.1: bubble = idle / total device time in the pipeline.
        bubble_fraction=idle / (pp * makespan) if makespan > 0 else 0.0,
        # Megatron's convention (same paper, eq. for t_pb / t_id = (p-1)/m): over ideal time.
        bubble_over_ideal=(makespan - ideal) / ideal if ideal > 0 else 0.0,
        peak_inflight=_peak_inflight(name, events, pp),
        busy=busy,
    )


def _peak_inflight(name: ScheduleName, events: list[Event], pp: int) -> list[int]:
    """Forwards whose activations are still held, in chunk-microbatches, per rank.

    Counted from F to B; what a split backward's W still needs from its B on is counted apart
    (cost/memory.held_frontier). A forward-only schedule keeps no autograd graph: 1 at a time.
    """
    if name in FORWARD_ONLY:
        return [1 if any(e.stage == r for e in events) else 0 for r in range(pp)]
    held, peak = [0] * pp, [0] * pp
    for e in events:  # each rank's events are in its execution order
        if e.kind == "F":
            held[e.stage] += 1
            peak[e.stage] = max(peak[e.stage], held[e.stage])
        elif e.kind == "B":
            held[e.stage] -= 1
    return peak


def peak_held(name: ScheduleName | str, events: list[Event], layers: list[list[int]]) -> list[int]:
    """Peak layer-micro-batches of activations per rank: the in-flight forwards of
    ``_peak_inflight``, each weighted by its chunk's layers (layers[rank][chunk]). With unequal
    chunks the peak depends on which chunks are in flight, not only on how many."""
    pp = len(layers)
    if ScheduleName(name) in FORWARD_ONLY:
        return [max(row) for row in layers]
    held, peak = [0] * pp, [0] * pp
    for e in events:
        if e.kind == "F":
            held[e.stage] += layers[e.stage][e.chunk]
            peak[e.stage] = max(peak[e.stage], held[e.stage])
        elif e.kind == "B":
            held[e.stage] -= layers[e.stage][e.chunk]
    return peak
