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
from functools import cached_property
from itertools import accumulate, count, repeat
from operator import itemgetter, sub
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
    # Row by row: one C call over every action would hold the GIL for 10+ ms at p=32, m=4096.
    m = 1 + max((max(map(itemgetter(1), row)) for row in actions if row), default=0)
    nvs = pp * chunks
    chunk_d = per_chunk(durations, pp, chunks)
    try:
        if name in RELEASE_BY_UNIT:
            ops = _compile(name, actions, chunk_d, m, nvs)
            start, end, pos = run_units(ops, 3 * m * nvs)
            starts, ends = _by_rank(ops, start, end)
            ended = len(end) - end.count(-1.0)
        else:
            ops, (starts, ends, ended, pos) = None, _run(name, actions, chunk_d, m, nvs)
    except (IndexError, KeyError):  # a chunk the rank lacks, an unknown kind: the dry run says
        dry_run(name, actions, virtual_stages)
        raise
    check_simulated(name, actions, virtual_stages, pos, ended, ops)
    return _summarise(name, actions, starts, ends)


def _by_rank(ops: list[list[tuple]], start, end) -> tuple[list[list[float]], list[list[float]]]:
    """Each rank's start and end times in its order, from times by key."""
    keys = [list(map(itemgetter(0), row)) for row in ops]
    starts = [list(map(start.__getitem__, k)) for k in keys]
    return starts, [list(map(end.__getitem__, k)) for k in keys]


def _fast_templates(name, rank, ds, split, m, nvs) -> dict[str, list[tuple]]:
    """``_templates`` for ``_run``'s key space, where every action has two inputs: keys are
    base + mb * (nvs + 1) + vs + 1, column 0 of the F block is an input that is always ready
    (the first stage's forward), and a missing second input repeats the first."""
    block, col = m * nvs, nvs + 1

    def widen(key: int) -> int:  # kind block * m * col + vs + 1
        return (key // block) * m * col + key % block + 1

    wide = {}
    for kind, rows in _templates(name, rank, ds, split, m, nvs).items():
        wide[kind] = [
            (widen(key), d1w, h1, *((d1w, h1) if d2 is None else (widen(d2), h2)), dur)
            for key, d1, h1, d2, h2, dur, _, _ in rows
            for d1w in [0 if d1 is None else widen(d1)]
        ]
    return wide


def _run(name, actions, chunk_d, m, nvs) -> tuple[list[list[float]], list[list[float]], int, list]:
    """Earliest start of every action given per-rank order: one pass with a wait list, each
    action's key and inputs read from its rank's templates. Returns each rank's start and end
    times, how many distinct actions ended and how far each rank got."""
    split = any("W" in map(itemgetter(0), row) for row in actions)
    tmpls = [_fast_templates(name, r, chunk_d[r], split, m, nvs) for r in range(len(actions))]
    col = nvs + 1
    end = [-1.0] * (3 * m * col)
    end[0 : m * col : col] = [0.0] * m  # the always-ready input of every first forward
    starts, ends = [[0.0] * len(row) for row in actions], [[0.0] * len(row) for row in actions]
    pos, free = [0] * len(actions), [0.0] * len(actions)
    # key -> the rank blocked on it. One at most: an output's consumers are the next stage
    # and its own rank, which lists the producer first (or never finishes: check_simulated).
    waiting: dict[int, int] = {}
    ready = list(range(len(actions)))
    while ready:  # this loop is the simulator's cost: kept flat, ~0.4 us per action
        rank = ready.pop()
        row, tmpl, st, en = actions[rank], tmpls[rank], starts[rank], ends[rank]
        t, i = free[rank], pos[rank]
        for i in range(i, len(row)):  # noqa: B020 (resumes where the rank stopped)
            kind, mb, chunk = row[i]
            key, d1, h1, d2, h2, duration = tmpl[kind][chunk]
            at = mb * col
            e = end[at + d1]
            if e < 0:
                waiting[at + d1] = rank
                break
            s = e + h1 if e + h1 > t else t
            e = end[at + d2]
            if e < 0:
                waiting[at + d2] = rank
                break
            if e + h2 > s:
                s = e + h2
            t = s + duration
            key += at
            end[key] = en[i] = t
            st[i] = s
            if key in waiting:
                ready.append(waiting.pop(key))
        else:
            i = len(row)
        pos[rank], free[rank] = i, t
    return starts, ends, len(end) - end.count(-1.0) - m, pos


def _summarise(name: ScheduleName, actions, starts, ends) -> Timeline:
    pp = len(actions)
    # Each rank's busy time, summed left to right action by action.
    busy = [sum(map(sub, en, st), 0.0) for st, en in zip(starts, ends, strict=True)]
    makespan = max((en[-1] for en in ends if en), default=0.0)  # a rank's ends never decrease
    idle = pp * makespan - sum(busy)
    ideal = max(busy, default=0.0)
    return Timeline(
        actions=actions,
        starts=starts,
        ends=ends,
        makespan=makespan,
        # Narayanan et al. 2021 §2.2.1: bubble = idle / total device time in the pipeline.
        bubble_fraction=idle / (pp * makespan) if makespan > 0 else 0.0,
        # Megatron's convention (same paper, eq. for t_pb / t_id = (p-1)/m): over ideal time.
        bubble_over_ideal=(makespan - ideal) / ideal if ideal > 0 else 0.0,
        peak_inflight=_peak_inflight(name, actions),
        busy=busy,
    )


def _peak_inflight(name: ScheduleName, actions: list[list[Action]]) -> list[int]:
    """Forwards whose activations are still held, in chunk-microbatches, per rank.

    Counted from F to B; what a split backward's W still needs from its B on is counted apart
    (cost/memory.held_frontier). A forward-only schedule keeps no autograd graph: 1 at a time.
    """
    if name in FORWARD_ONLY:
        return [1 if row else 0 for row in actions]
    return [_peak_held_forwards("".join(map(itemgetter(0), row))) for row in actions]


def _peak_held_forwards(kinds: str) -> int:
    """Peak of (forwards - backwards so far) over one rank's kinds, e.g. "FFBFBB" -> 2. It
    peaks just before a B or at the end, so it is the peak of forwards counted before the
    j-th B, minus j (string ops rather than a loop: a rank can list thousands)."""
    runs = accumulate(map(len, kinds.replace("W", "").split("B")))
    return max(map(sub, runs, count()))


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
