"""The simulator's pass for schedules that release outputs by unit (schedules.RELEASE_BY_UNIT):
DualPipeV, whose overlapped pairs send both outputs when the pair ends, as torch's
OVERLAP_F_B does. Kept apart so every other schedule runs simulate.py's plain, faster pass.
"""

from __future__ import annotations

from app.core.schedules import Action, ScheduleName, release_units


def with_release(name: ScheduleName, row: list[Action], ops: list, last_rank: bool) -> list:
    """One rank's compiled ops with the release keys of their units appended."""
    last = release_units(name, row, last_rank)
    ops = _pair_waits(ops, row, last)
    release: list[tuple[int, ...]] = [()] * len(ops)
    for i, j in enumerate(last):
        release[j] = (*release[j], ops[i][0])
    return [(*op, rel) for op, rel in zip(ops, release, strict=True)]


def _pair_waits(ops: list[tuple], row: list[Action], last: list[int]) -> list[tuple]:
    """A pair starts once both halves' inputs are in (torch posts both receives first): its
    F also waits for the B's input from the next stage."""
    out = list(ops)
    for i, j in enumerate(last):
        if row[i].kind == "F" and j > i:
            b = ops[i + 1]
            out[i] = (*ops[i][:3], b[3], b[4], ops[i][5])
    return out


def run_units(ops: list[list[tuple]], n_keys: int) -> tuple[list[float], list[float], list[int]]:
    """_run for schedules that release by unit: dependencies on other ranks wait for their
    unit's end (``out``), those on the own rank for the action's own end."""
    start, end = [0.0] * n_keys, [-1.0] * n_keys
    out = [-1.0] * n_keys  # when an output reaches other ranks (its unit's end)
    pos, free = [0] * len(ops), [0.0] * len(ops)
    waiting: dict[int, list[int]] = {}
    ready = list(range(len(ops)))
    while ready:
        rank = ready.pop()
        row, i, t = ops[rank], pos[rank], free[rank]
        while i < len(row):
            key, d1, h1, d2, h2, duration, release = row[i]
            s = t
            if d1 >= 0:
                if out[d1] < 0:
                    waiting.setdefault(d1, []).append(rank)
                    break
                if out[d1] + h1 > s:
                    s = out[d1] + h1
            elif d1 < -1 and end[-2 - d1] > s:
                s = end[-2 - d1]
            if d2 >= 0:
                if out[d2] < 0:
                    waiting.setdefault(d2, []).append(rank)
                    break
                if out[d2] + h2 > s:
                    s = out[d2] + h2
            elif d2 < -1 and end[-2 - d2] > s:
                s = end[-2 - d2]
            t = s + duration
            start[key], end[key] = s, t
            for k in release:
                out[k] = t
                ready.extend(waiting.pop(k, ()))
            i += 1
        pos[rank], free[rank] = i, t
    return start, end, pos
