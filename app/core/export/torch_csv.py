"""A schedule as torch's action CSV: one row per pipeline rank, one cell per compute action,
``<stage><type><microbatch>`` as _Action.__repr__ writes it (F forward, I input-grad,
W weight-grad, B full backward, ``(a;b)OVERLAP_F_B`` an overlapped pair), which
_PipelineScheduleRuntime._load_csv reads back (torch 2.13, torch/distributed/pipelining/
schedules.py). The actions are meshscope's own (app.core.schedules.build), so the CSV runs
what the timeline draws."""

from __future__ import annotations

from app.core.export.torch_names import torch_schedule
from app.core.schedules import (
    RELEASE_BY_UNIT,
    SPLIT_BACKWARD,
    Action,
    ScheduleName,
    build,
    release_units,
    virtual_stage,
)


def rows(name: ScheduleName, pp: int, m: int, v: int) -> list[list[str]]:
    """Each rank's cells; raises Cannot for a schedule torch does not have."""
    torch_schedule(name, "torch")
    actions = build(name, pp, m, v)
    return [_cells(name, r, row, pp) for r, row in enumerate(actions)]


def _cells(name: ScheduleName, rank: int, row: list[Action], pp: int) -> list[str]:
    # A split-backward schedule's B is torch's BACKWARD_INPUT ("I"); elsewhere the whole one.
    b = "I" if name in SPLIT_BACKWARD else "B"

    def cell(a: Action, kind: str) -> str:
        return f"{virtual_stage(name, rank, a.chunk, pp)}{kind}{a.microbatch}"

    ends = release_units(name, row, rank == pp - 1)
    # DualPipeV's unpaired backwards run whole only between its fill and its drain's switch
    # to input-only B (see _split_ends); elsewhere torch writes I then W.
    fill, tail = _split_ends(rank, pp) if name in RELEASE_BY_UNIT else (len(row), 0)
    whole_until = sum(1 for a in row if a.kind == "B") - tail
    out, i, backwards = [], 0, 0
    while i < len(row):
        a, j = row[i], ends[i]
        if name in RELEASE_BY_UNIT and j > i:
            # DualPipeV's overlapped pair: torch's OVERLAP_F_B of a forward and a whole
            # backward (ScheduleDualPipeV.add_overlap_f_b); our B then W are that backward.
            out.append(f"({cell(a, 'F')};{cell(row[i + 1], 'B')})OVERLAP_F_B")
            i, backwards = j + 1, backwards + 1
            continue
        if a.kind == "B" and fill <= backwards < whole_until and _whole(row, i):
            out.append(cell(a, "B"))  # one whole backward: I and its W at once
            i, backwards = i + 2, backwards + 1
            continue
        backwards += a.kind == "B"
        out.append(cell(a, b if a.kind == "B" else a.kind))
        i += 1
    return out


def _whole(row: list[Action], i: int) -> bool:
    return i + 1 < len(row) and row[i + 1] == Action("W", row[i].microbatch, row[i].chunk)


def _split_ends(rank: int, pp: int) -> tuple[int, int]:
    """(first, last) backwards of a DualPipeV rank that torch splits into I and W even where
    W follows at once: the fill's p-1-rank (ScheduleDualPipeV step 3, "I1W1F1"), and the
    drain's from its zero-bubble switch on (steps 6-7: from pair (rank+1)//2 of the rank+1
    B1/B0 pairs, at B1 on odd ranks, at B0 on even ones; then the p-1-rank "W0B0" steps), as
    v_shape._dualpipev_fill and _dualpipev_drain build them."""
    half = (rank + 1) // 2
    return pp - 1 - rank, (pp - 1 - rank) + 2 * (rank + 1 - half) - (rank % 2 == 0)


def render(cells: list[list[str]]) -> str:
    # csv.writer's form: no cell holds a comma, quote or newline, so no quoting is needed.
    return "".join(",".join(row) + "\n" for row in cells)
