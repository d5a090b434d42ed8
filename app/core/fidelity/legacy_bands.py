"""The earlier error band, kept for app/api/plan.py's Judge until it moves to bands.band_for.

A five-field kind (generation, TP > 1, PP > 1, DP > 1, ZeRO-3) and a band of the rows'
in-sample errors, widening from the kind to its generation to every row while fewer than
``MIN_ROWS``: exactly what it was, so the planner's figures do not move under it. The pages'
band is bands.band_for, which counts held-out rows of the seven-field kind only and never
widens; the planner should move to it (the in-sample band is what the issue calls dishonest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.core.fidelity.board import Row, summary
from app.core.fidelity.kinds import generation

MIN_ROWS = 3


@dataclass(frozen=True)
class Kind:
    generation: str | None  # None: hardware the cost model has no fitted constants for
    tp: bool
    pp: bool
    dp: bool
    zero3: bool


def row_kind(row: Row) -> Kind:
    r = row.run
    sharded = r.zero in ("fsdp", "zero-3")
    return Kind(generation(r.hardware), r.tp > 1, r.pp > 1, r.dp > 1, sharded)


def band(rows: Sequence[Row], kind: Kind) -> dict[str, Any] | None:
    """The error band of the rows like ``kind``, widening while too few; None when the kind's
    generation has no predicted row at all."""
    predicted = [r for r in rows if not r.reason]
    same_gen = [r for r in predicted if row_kind(r).generation == kind.generation]
    if kind.generation is None or not same_gen:
        return None
    like = [r for r in same_gen if row_kind(r) == kind]
    level, chosen = next(
        (lv, rs) for lv, rs in (("kind", like), ("generation", same_gen), ("all", predicted))
        if len(rs) >= MIN_ROWS or lv == "all"
    )  # fmt: skip
    return {
        "level": level,
        "kind": asdict(kind),
        **summary([r.error for r in chosen]),
        "hardware": sorted({r.hardware for r in chosen}),
    }
