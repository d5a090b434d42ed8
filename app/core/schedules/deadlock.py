"""Deadlock dry run: would these per-rank orders complete on a blocking runtime?

Each rank runs its order one action at a time. An action may start only once its inputs
exist: F of virtual stage s > 0 receives the F of s - 1 for that micro-batch, B receives the
B of s + 1 and needs its own F, W needs its own B. A micro-batch's chain is its copy's
stages (``schedules.stages_per_copy``: all of them, or one copy's p for DualPipe). Where the
runtime sends outputs by unit (``RELEASE_BY_UNIT``), an output reaches other ranks when its
unit's last action ends and a pair starts once both halves' inputs are in
(``units.unit_plan``, the simulator's own plan). That is how torch's
_PipelineScheduleRuntime behaves: it posts each recv before the compute that consumes it and
blocks in wait() (torch/distributed/pipelining/schedules.py), so a recv whose send never
comes, or comes later in a blocked rank's order, hangs.

``dry_run`` raises ``DeadlockError`` naming the action that would hang, its rank and what it
waits for; ``OrderError`` for an order that is malformed before any walk (an unknown kind, a
chunk the rank does not hold, an action listed twice, a send nobody receives).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.core.schedules.build import (
    RELEASE_BY_UNIT,
    Action,
    ScheduleError,
    ScheduleName,
    chunks_per_rank,
    stage_location,
    stages_per_copy,
    virtual_stage,
)
from app.core.schedules.units import unit_plan

# (kind, micro-batch, virtual stage): one action's identity across ranks.
Key = tuple[str, int, int]


@dataclass(frozen=True)
class Hang:
    """One rank stuck: the action it cannot start, what it waits for, and why it never comes."""

    rank: int
    action: str  # e.g. "B3c1"
    waits_for: str  # e.g. "B3c0 from rank 2"
    why: str

    def __str__(self) -> str:
        return f"rank {self.rank}: {self.action} waits for {self.waits_for}{self.why}"


class OrderError(ScheduleError):
    """An order that is malformed before any walk; names the rank and the action."""

    def __init__(self, reason: str) -> None:
        super().__init__("schedule", reason)


class DeadlockError(ScheduleError):
    """The orders cannot complete. ``hangs[0]`` is the cause; the rest wait on it."""

    def __init__(self, hangs: list[Hang]) -> None:
        self.hangs = hangs
        rest = f" (and {len(hangs) - 1} more rank(s) waiting on it)" if len(hangs) > 1 else ""
        super().__init__("schedule", f"this order would hang: {hangs[0]}{rest}")


@dataclass(frozen=True)
class _Orders:
    """The orders with every action's identity and place: who runs it, at which index."""

    name: ScheduleName
    actions: list[list[Action]]
    chunks: int
    per_copy: int
    place: dict[Key, tuple[int, int]]  # key -> (rank, index in that rank's order)

    @property
    def pp(self) -> int:
        return len(self.actions)

    def key(self, rank: int, a: Action) -> Key:
        return a.kind, a.microbatch, virtual_stage(self.name, rank, a.chunk, self.pp)

    def label(self, key: Key) -> str:
        kind, mb, vs = key
        return Action(kind, mb, stage_location(self.name, vs, self.pp)[1]).compact(self.chunks > 1)

    def home(self, vs: int) -> int:
        return stage_location(self.name, vs, self.pp)[0]

    def inputs(self, key: Key) -> Iterator[Key]:
        """What an action needs first (the simulator's rule, app/core/simulate/timeline.py)."""
        kind, mb, vs = key
        pos = vs % self.per_copy
        if kind == "F" and pos > 0:
            yield "F", mb, vs - 1
        elif kind == "B":
            yield "F", mb, vs
            if pos + 1 < self.per_copy:
                yield "B", mb, vs + 1
        elif kind == "W":
            yield "B", mb, vs


def dry_run(name: ScheduleName | str, actions: list[list[Action]], virtual_stages: int) -> None:
    """Raise OrderError or DeadlockError if the orders would not complete; else return."""
    orders = _index(ScheduleName(name), actions, virtual_stages)
    _check_sends(orders)
    plans = [_plan(orders, r) for r in range(orders.pp)]
    pos, ended, sent = _walk(orders, plans)
    if any(pos[r] < len(actions[r]) for r in range(orders.pp)):
        raise DeadlockError(_explain(orders, plans, pos, ended, sent))


def _index(name: ScheduleName, actions: list[list[Action]], virtual_stages: int) -> _Orders:
    chunks = chunks_per_rank(name, virtual_stages)
    pp = len(actions)
    place: dict[Key, tuple[int, int]] = {}
    for rank, row in enumerate(actions):
        for i, a in enumerate(row):
            shown = f"rank {rank}'s action {i} ({a.kind}{a.microbatch}c{a.chunk})"
            if a.kind not in ("F", "B", "W"):
                raise OrderError(f"{shown}: kind must be F, B or W")
            if not 0 <= a.chunk < chunks or a.microbatch < 0:
                raise OrderError(f"{shown}: needs 0 <= chunk < {chunks} and micro-batch >= 0")
            key = a.kind, a.microbatch, virtual_stage(name, rank, a.chunk, pp)
            if key in place:
                raise OrderError(f"{shown} is listed twice: its second run has no matching send")
            place[key] = rank, i
    return _Orders(name, actions, chunks, stages_per_copy(name, pp, chunks), place)


def _check_sends(o: _Orders) -> None:
    """Every send has its receive: F of s feeds F of s + 1, B of s feeds B of s - 1."""
    for (kind, mb, vs), (rank, _) in o.place.items():
        pos = vs % o.per_copy
        to = vs + 1 if kind == "F" and pos + 1 < o.per_copy else None
        if kind == "B" and pos > 0:
            to = vs - 1
        if to is not None and (kind, mb, to) not in o.place and o.home(to) != rank:
            sent = o.label((kind, mb, vs))
            raise OrderError(
                f"rank {rank}: {sent} sends to rank {o.home(to)}, which never runs "
                f"{o.label((kind, mb, to))} to receive it"
            )


@dataclass(frozen=True)
class _Rank:
    """One rank's order as the runtime sees it (units.unit_plan for pairs)."""

    keys: list[Key]
    waits: list[tuple[int, ...]]  # later actions whose inputs this one's start also needs
    sends: list[tuple[int, ...]]  # the actions whose outputs leave when this one ends


def _plan(o: _Orders, rank: int) -> _Rank:
    row = o.actions[rank]
    keys = [o.key(rank, a) for a in row]
    if o.name not in RELEASE_BY_UNIT:
        return _Rank(keys, [()] * len(row), [(i,) for i in range(len(row))])
    try:
        release, waits, _ = unit_plan(o.name, row, rank, o.pp)
    except ValueError as exc:  # DualPipe's message plan fits only its own order
        raise OrderError(str(exc)) from None
    sends: list[tuple[int, ...]] = [()] * len(row)
    for i, j in enumerate(release):
        sends[j] = (*sends[j], i)
    return _Rank(keys, list(waits), sends)


def _blocker(o: _Orders, rank: int, plan: _Rank, i: int, ended: set, sent: set) -> Key | None:
    """The first input action i cannot start without: one from its own rank must have ended,
    one from another rank must have been sent; a pair's start also needs its partner's."""
    for d in o.inputs(plan.keys[i]):
        if d not in (ended if o.home(d[2]) == rank else sent):
            return d
    for k in plan.waits[i]:
        for d in o.inputs(plan.keys[k]):
            if o.home(d[2]) != rank and d not in sent:
                return d
    return None


def _walk(o: _Orders, plans: list[_Rank]) -> tuple[list[int], set[Key], set[Key]]:
    """Lockstep walk with a wait list (each action visited once): how far each rank gets."""
    ended: set[Key] = set()
    sent: set[Key] = set()
    pos = [0] * o.pp
    waiting: dict[Key, list[int]] = {}
    ready = list(range(o.pp))
    while ready:
        rank = ready.pop()
        plan = plans[rank]
        while pos[rank] < len(plan.keys):
            i = pos[rank]
            need = _blocker(o, rank, plan, i, ended, sent)
            if need is not None:
                waiting.setdefault(need, []).append(rank)
                break
            ended.add(plan.keys[i])
            for k in plan.sends[i]:
                sent.add(plan.keys[k])
                ready.extend(waiting.pop(plan.keys[k], ()))
            pos[rank] = i + 1
    return pos, ended, sent


def _explain(o: _Orders, plans: list[_Rank], pos: list[int], ended: set, sent: set) -> list[Hang]:
    """One Hang per stuck rank, the cause first: a rank whose wait leads back to its own
    order behind the stuck action (through data alone first, then through other ranks'
    stuck heads), or to an action no rank runs."""

    def head(rank: int) -> tuple[str, Key]:  # the stuck action's label, the input it lacks
        plan = plans[rank]
        need = _blocker(o, rank, plan, pos[rank], ended, sent)
        if need is None:  # cannot happen: the walk stopped this rank on a missing input
            raise OrderError(f"rank {rank} stopped at {plan.keys[pos[rank]]} with inputs in")
        return o.label(plan.keys[pos[rank]]), need

    def behind_own(rank: int, need: Key, through_heads: bool) -> Key | None:
        seen, todo = {need}, [need]
        while todo:
            key = todo.pop()
            where = o.place.get(key)
            if where is None or where[1] < pos[where[0]]:
                continue  # never runs, or ran already (its send waits on its own unit)
            if where[0] == rank:
                return key
            nxt = [d for d in o.inputs(key) if d not in ended]
            nxt += [head(where[0])[1]] if through_heads else []
            todo += [d for d in nxt if d not in seen]
            seen.update(nxt)
        return None

    ranked: list[tuple[int, Hang]] = []
    for rank in (r for r in range(o.pp) if pos[r] < len(plans[r].keys)):
        label, need = head(rank)
        where, waits = o.place.get(need), o.label(need)
        if where is None:
            why, tier = f" from rank {o.home(need[2])}, which never runs it", 0
        elif where[0] == rank:
            why, tier = ", which this rank runs only later", 0
        else:
            waits += f" from rank {where[0]}"
            data = behind_own(rank, need, through_heads=False)
            behind = data or behind_own(rank, need, through_heads=True)
            why = (
                f", which waits on {o.label(behind)} that this rank runs only after {label}"
                if behind
                else f", stuck behind rank {where[0]}'s {head(where[0])[0]}"
            )
            tier = 0 if data else 1 if behind else 2
        ranked.append((tier, Hang(rank, label, waits, why)))
    return [h for _, h in sorted(ranked, key=lambda th: (th[0], th[1].rank))]


def check_simulated(name, actions, v: int, pos: list[int], ended: int, ops) -> None:
    """After the simulator's own pass: a rank that never finished, an action listed twice
    (``ended``, the distinct actions that ended, fewer than listed) or, for schedules
    released by unit (``ops`` given), an action run before its own rank's input (compiled as
    done: -2 - key). Any of them: the dry run says which action hangs and why."""
    total = sum(len(row) for row in actions)
    finished = all(p == len(row) for p, row in zip(pos, actions, strict=True))
    if finished and ended == total and _own_first(ops):
        return
    dry_run(name, actions, v)
    raise OrderError("the simulator and the dry run disagree about these orders")


def _own_first(ops) -> bool:
    if ops is None:
        return True
    seen = bytearray(1 + max((op[0] for row in ops for op in row), default=0))
    for row in ops:
        for key, d1, _, d2, *_ in row:
            if (d1 < -1 and not seen[-2 - d1]) or (d2 < -1 and not seen[-2 - d2]):
                return False
            seen[key] = 1
    return True
