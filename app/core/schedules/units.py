"""Which action of a rank releases which output, for schedules that release by unit
(build.RELEASE_BY_UNIT): DualPipeV's overlapped pairs send both outputs when the pair ends,
as torch's OVERLAP_F_B does; DualPipe's sends and receives follow dualpipe.py's queue. The
simulator (app/core/simulate/units.py), the deadlock dry run and the probe read this plan,
and how long such a pair may last (pair_bounds), which the scenario's checks read.
"""

from __future__ import annotations

from app.core.schedules import dualpipe
from app.core.schedules.build import TWO_COPIES, Action, ScheduleName, release_units


def unit_plan(
    name: ScheduleName, row: list[Action], rank: int, pp: int
) -> tuple[list[int], list[tuple[int, ...]], list[tuple[int, int]]]:
    """One rank's (release, waits, pairs): release[i] = the action whose end sends i's output;
    waits[i] = the later actions whose inputs i's start also needs; pairs = the overlapped
    F&B pairs as (first, last) indices."""
    if name in TWO_COPIES:
        m = sum(1 for a in row if a.kind == "F")  # each rank runs every micro-batch's F once
        plan = dualpipe.plan(rank, pp, m)
        if plan.ops != [tuple(a) for a in row]:
            raise ValueError(f"rank {rank}: not DualPipe's order, no message plan for it")
        return plan.release, plan.waits, plan.pairs
    last = release_units(name, row, rank == pp - 1)
    pairs = [(i, j) for i, j in enumerate(last) if j > i and row[i].kind == "F"]
    waits: list[tuple[int, ...]] = [()] * len(row)
    for i, _ in pairs:  # torch posts both receives of a pair first
        waits[i] = (i + 1,)
    return last, waits, pairs


def pair_bounds(durations) -> tuple[float, float]:
    """(shortest, longest) an overlapped F&B pair may last, over every chunk's Durations:
    from its longer part alone, max(F, B+W) (overlap hides communication, DeepSeek-V3
    §3.2.1, not compute), to F+B+W, the parts one after the other (no gain)."""
    flat, todo = [], [durations]
    while todo:
        d = todo.pop()
        if hasattr(d, "fb"):
            flat.append(d)
        else:
            todo.extend(d)
    lo = max(max(d.f, d.b + d.w) for d in flat)
    hi = min(d.f + d.b + d.w for d in flat)
    return lo, hi
