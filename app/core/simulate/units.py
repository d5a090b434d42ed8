"""The simulator's pass for schedules that release outputs by unit (schedules.RELEASE_BY_UNIT):
DualPipeV, whose overlapped pairs send both outputs when the pair ends, as torch's
OVERLAP_F_B does, and DualPipe, whose sends and receives follow dualpipe.py's queue
(app/core/schedules/dualpipe.py). Kept apart so every other schedule runs simulate.py's
plain, faster pass.

An overlapped F&B pair lasts ``Durations.fb`` when it is given (DualPipe(V)'s overlap gain:
DeepSeek-V3 §3.2.1, the computation of one micro-batch hides the communication of the other),
else the sum of its parts; its actions are drawn scaled to fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.schedules import Action, ScheduleName
from app.core.schedules.units import unit_plan


def skeleton(
    name: ScheduleName, row: list[Action], ops: list, rank: int, pp: int, plan: tuple | None = None
) -> tuple[list, list[tuple[int, int]]]:
    """One rank's compiled ops with the later inputs each waits for and the release keys of
    their units appended, and its overlapped pairs (which fit_pairs times with the rank's
    Durations); ``plan``: the rank's unit_plan where the caller has it already (it reads the
    actions alone)."""
    last, waits, pairs = plan or unit_plan(name, row, rank, pp)
    ops = _waits(ops, row, waits)
    release: list[tuple[int, ...]] = [()] * len(ops)
    for i, j in enumerate(last):
        release[j] = (*release[j], ops[i][0])
    return [(*op, rel) for op, rel in zip(ops, release, strict=True)], pairs


def _input_of(op: tuple, kind: str) -> tuple[int, float]:
    """The (dep, hop) of an action's input from another rank: F's activation, B's gradient."""
    return (op[1], op[2]) if kind == "F" else (op[3], op[4]) if kind == "B" else (-1, 0.0)


def _waits(ops: list[tuple], row: list[Action], waits: list[tuple[int, ...]]) -> list[tuple]:
    """An action that starts after receives posted for later actions (a pair's F, and
    dualpipe.py's F/W that wait for the next input) waits for those inputs too."""
    out = list(ops)
    for i, later in enumerate(waits):
        extra = [_input_of(ops[k], row[k].kind) for k in later]
        extra = [(d, h) for d, h in extra if d >= 0]
        if not extra:
            continue
        if len(extra) > 1 or ops[i][3] != -1:
            raise ValueError(f"{row[i].compact(True)} would wait for more inputs than it holds")
        out[i] = (*ops[i][:3], *extra[0], ops[i][5])
    return out


def fit_pairs(ops: list[tuple], row: list[Action], pairs, chunk_d: Sequence) -> list[tuple]:
    """Scale each overlapped pair's actions so the pair lasts its forward chunk's ``fb``
    (``chunk_d``: the rank's Durations per chunk); what follows the duration is kept."""
    out = list(ops)
    for first, last in pairs:
        fb = getattr(chunk_d[row[first].chunk], "fb", None)
        total = sum(ops[k][5] for k in range(first, last + 1))
        if fb is None or total <= 0:
            continue
        for k in range(first, last + 1):
            out[k] = (*ops[k][:5], ops[k][5] * fb / total, *ops[k][6:])
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
