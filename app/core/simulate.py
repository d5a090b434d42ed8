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
from typing import NamedTuple, TypeAlias

from app.core.gc_pause import gc_paused
from app.core.schedules import (
    FORWARD_ONLY,
    RELEASE_BY_UNIT,
    Action,
    ScheduleName,
    chunks_per_rank,
    stage_location,
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


class DeadlockError(ValueError):
    """The schedule cannot complete; the message names the actions that never became ready."""


# A compiled action is a plain tuple (key, dep1, hop1, dep2, hop2, duration): dep = -1 when
# absent; hop = the p2p time added when the dependency was produced on another rank. Schedules
# that release by unit (RELEASE_BY_UNIT) add ``release``, the keys whose outputs this action's
# end hands to other ranks, and write a dep produced on the action's own rank as -2 - key (it
# is done already: the order puts it earlier, and it needs no release).
_Op = tuple[int, int, float, int, float, float]


def _dep(key: int, producer_rank: int, rank: int, units: bool) -> int:
    return -2 - key if units and producer_rank == rank else key


def _compile(name, actions, chunk_d, m, nvs) -> list[list[_Op]]:
    """Actions -> integer keys and static dependencies (who produced a dep never changes)."""
    pp = len(actions)
    split = any(a.kind == "W" for rank in actions for a in rank)
    units = name in RELEASE_BY_UNIT
    home = [stage_location(name, vs, pp)[0] for vs in range(nvs)]  # rank of each stage
    f_base, b_base, w_base = 0, m * nvs, 2 * m * nvs  # key = kind_base + mb * nvs + vs
    out = []
    for rank, row in enumerate(actions):
        ds = chunk_d[rank]
        # Per chunk: F, B, W seconds and the hop into it (p2p when the producer is elsewhere).
        f_s, b_s, w_s = ([d.of(k, split) for d in ds] for k in "FBW")
        vs_of = [virtual_stage(name, rank, c, pp) for c in range(nvs // pp)]
        up_hop = [
            ds[c].p2p if vs > 0 and home[vs - 1] != rank else 0.0 for c, vs in enumerate(vs_of)
        ]
        down_hop = [
            ds[c].p2p if vs + 1 < nvs and home[vs + 1] != rank else 0.0
            for c, vs in enumerate(vs_of)
        ]
        ops = []
        for kind, mb, chunk in row:
            vs = vs_of[chunk]
            at = mb * nvs + vs
            if kind == "F":
                dep1 = _dep(at - 1, home[vs - 1], rank, units) if vs > 0 else -1
                ops.append((f_base + at, dep1, up_hop[chunk], -1, 0.0, f_s[chunk]))
            elif kind == "B":
                dep2 = _dep(b_base + at + 1, home[vs + 1], rank, units) if vs + 1 < nvs else -1
                own_f = _dep(f_base + at, rank, rank, units)
                ops.append((b_base + at, own_f, 0.0, dep2, down_hop[chunk], b_s[chunk]))
            else:
                own_b = _dep(b_base + at, rank, rank, units)
                ops.append((w_base + at, own_b, 0.0, -1, 0.0, w_s[chunk]))
        out.append(with_release(name, row, ops, rank == pp - 1) if units else ops)
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
    pp = len(actions)
    chunks = chunks_per_rank(name, virtual_stages)
    m = 1 + max((a.microbatch for row in actions for a in row), default=0)
    nvs = pp * chunks
    ops = _compile(name, actions, per_chunk(durations, pp, chunks), m, nvs)
    run = run_units if name in RELEASE_BY_UNIT else _run
    start, end, pos = run(ops, 3 * m * nvs)
    _raise_if_stuck(actions, pos)
    make = tuple.__new__  # skips NamedTuple's Python-level __new__: 2x faster at 10^5 events
    events = [
        make(Event, (rank, kind, mb, chunk, start[op[0]], end[op[0]]))
        for rank, row in enumerate(actions)
        for (kind, mb, chunk), op in zip(row, ops[rank], strict=True)
    ]
    return _summarise(name, events, pp)


def _run(ops: list[list[_Op]], n_keys: int) -> tuple[list[float], list[float], list[int]]:
    """Earliest start of every action given per-rank order: one pass with a wait list."""
    start, end = [0.0] * n_keys, [-1.0] * n_keys
    pos, free = [0] * len(ops), [0.0] * len(ops)
    waiting: dict[int, list[int]] = {}
    ready = list(range(len(ops)))
    while ready:
        rank = ready.pop()
        row, i, t = ops[rank], pos[rank], free[rank]
        while i < len(row):
            key, d1, h1, d2, h2, duration = row[i]
            s = t
            if d1 >= 0:
                if end[d1] < 0:
                    waiting.setdefault(d1, []).append(rank)
                    break
                if end[d1] + h1 > s:
                    s = end[d1] + h1
            if d2 >= 0:
                if end[d2] < 0:
                    waiting.setdefault(d2, []).append(rank)
                    break
                if end[d2] + h2 > s:
                    s = end[d2] + h2
            t = s + duration
            start[key], end[key] = s, t
            ready.extend(waiting.pop(key, ()))
            i += 1
        pos[rank], free[rank] = i, t
    return start, end, pos


def _raise_if_stuck(actions: list[list[Action]], pos: list[int]) -> None:
    stuck = [
        f"rank {r}: {actions[r][pos[r]].compact(True)}"
        for r in range(len(actions))
        if pos[r] < len(actions[r])
    ]
    if stuck:
        raise DeadlockError("schedule cannot complete; stuck at " + ", ".join(stuck))


def _summarise(name: ScheduleName, events: list[Event], pp: int) -> Timeline:
    makespan = max((e.end for e in events), default=0.0)
    busy = [0.0] * pp
    for e in events:
        busy[e.stage] += e.end - e.start
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

    Activations are released at B (the input-gradient pass consumes them; W keeps only the
    small per-layer inputs). A forward-only schedule keeps no autograd graph: 1 at a time.
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
