"""Turn per-rank action lists plus durations into a timeline.

Each rank runs its actions in the listed order. An action starts when its rank is free and
its dependencies are done: F waits for the previous virtual stage's F (plus p2p time when
that stage lives on another rank); B waits for its own F and for the next virtual stage's
B (plus p2p); W waits for its own B. The start times are the unique earliest ones this
order allows, found in one pass with a wait list (O(actions)).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from app.core.schedules import (
    FORWARD_ONLY,
    Action,
    ScheduleName,
    chunks_per_rank,
    virtual_stage,
)


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


@dataclass(frozen=True)
class Event:
    stage: int  # pipeline rank (pp coordinate)
    kind: str
    microbatch: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class Timeline:
    events: list[Event]
    makespan: float
    bubble_fraction: float
    bubble_over_ideal: float
    peak_inflight: list[int]
    busy: list[float] = field(default_factory=list)


class DeadlockError(ValueError):
    """The schedule cannot complete; the message names the actions that never became ready."""


Key = tuple[str, int, int]  # (kind, microbatch, virtual stage)


def _deps(a: Action, vs: int, nvs: int) -> list[Key]:
    if a.kind == "F":
        return [("F", a.microbatch, vs - 1)] if vs > 0 else []
    if a.kind == "B":
        deps = [("F", a.microbatch, vs)]
        return deps + ([("B", a.microbatch, vs + 1)] if vs + 1 < nvs else [])
    return [("B", a.microbatch, vs)]


def simulate(
    name: ScheduleName | str,
    actions: list[list[Action]],
    durations: Durations | list[Durations],
    virtual_stages: int = 1,
) -> Timeline:
    """Simulate; ``durations`` may be one Durations or one per pipeline rank."""
    name = ScheduleName(name)
    pp = len(actions)
    per_rank = durations if isinstance(durations, list) else [durations] * pp
    split = any(a.kind == "W" for rank in actions for a in rank)
    nvs = pp * chunks_per_rank(name, virtual_stages)
    end: dict[Key, float] = {}
    owner: dict[Key, int] = {}
    free = [0.0] * pp
    pos = [0] * pp
    events: list[Event] = []
    waiting: dict[Key, list[int]] = defaultdict(list)
    ready = deque(range(pp))

    def arrival(dep: Key, rank: int) -> float:
        hop = per_rank[rank].p2p if dep[0] != "W" and owner[dep] != rank else 0.0
        return end[dep] + hop

    while ready:
        rank = ready.popleft()
        while pos[rank] < len(actions[rank]):
            a = actions[rank][pos[rank]]
            vs = virtual_stage(name, rank, a.chunk, pp)
            deps = _deps(a, vs, nvs)
            missing = next((d for d in deps if d not in end), None)
            if missing is not None:
                waiting[missing].append(rank)
                break
            start = max([free[rank]] + [arrival(d, rank) for d in deps])
            finish = start + per_rank[rank].of(a.kind, split)
            key = (a.kind, a.microbatch, vs)
            end[key], owner[key], free[rank] = finish, rank, finish
            events.append(Event(rank, a.kind, a.microbatch, a.chunk, start, finish))
            pos[rank] += 1
            ready.extend(waiting.pop(key, []))
    _raise_if_stuck(actions, pos)
    return _summarise(name, events, pp, split)


def _raise_if_stuck(actions: list[list[Action]], pos: list[int]) -> None:
    stuck = [
        f"rank {r}: {actions[r][pos[r]].compact(True)}"
        for r in range(len(actions))
        if pos[r] < len(actions[r])
    ]
    if stuck:
        raise DeadlockError("schedule cannot complete; stuck at " + ", ".join(stuck))


def _summarise(name: ScheduleName, events: list[Event], pp: int, split: bool) -> Timeline:
    makespan = max((e.end for e in events), default=0.0)
    busy = [0.0] * pp
    for e in events:
        busy[e.stage] += e.end - e.start
    idle = pp * makespan - sum(busy)
    ideal = max(busy, default=0.0)
    return Timeline(
        events=sorted(events, key=lambda e: (e.start, e.stage)),
        makespan=makespan,
        # Narayanan et al. 2021 §2.2.1: bubble = idle / total device time in the pipeline.
        bubble_fraction=idle / (pp * makespan) if makespan > 0 else 0.0,
        # Megatron's convention (same paper, eq. for t_pb / t_id = (p-1)/m): over ideal time.
        bubble_over_ideal=(makespan - ideal) / ideal if ideal > 0 else 0.0,
        peak_inflight=_peak_inflight(name, events, pp, split),
        busy=busy,
    )


def _peak_inflight(name: ScheduleName, events: list[Event], pp: int, split: bool) -> list[int]:
    """Forwards whose activations are still held, in chunk-microbatches, per rank.

    Activations are released at B (the input-gradient pass consumes them; W keeps only the
    small per-layer inputs). A forward-only schedule keeps no autograd graph: 1 at a time.
    """
    if name in FORWARD_ONLY:
        return [1 if any(e.stage == r for e in events) else 0 for r in range(pp)]
    held, peak = [0] * pp, [0] * pp
    for e in sorted(events, key=lambda e: (e.stage, e.start, e.end)):
        if e.kind == "F":
            held[e.stage] += 1
            peak[e.stage] = max(peak[e.stage], held[e.stage])
        elif e.kind == "B":
            held[e.stage] -= 1
    return peak
