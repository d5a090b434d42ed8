"""The measured timeline's rows at thousands of ranks: one row per pipeline stage, the rank
whose step ended nearest its stage's median standing for its DP x TP (x CP) peers, plus the
outliers, the ranks that ended furthest from their stage's median.

Ranks of one stage run the same layers on same-sized micro-batches (traces/stragglers.py
compares them the same way), so one of them draws what the others did; a rank that did not
is exactly what a reader looks for, so it keeps its own row. Below ``FOLD_AT`` rows every rank
is drawn, as before."""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median

FOLD_AT = 64  # rows a timeline draws one per rank; past this it folds
MAX_OUTLIERS = 16  # outlier rows kept, the furthest from their stage's median first
OUTLIER_SHARE = 0.05  # a step end this far from its stage's median is an outlier


def fold_rows(rows: list[dict], ends: Mapping[int, float]) -> list[dict]:
    """``rows`` (analysis.rows: one per rank with its coordinates) folded by pipeline stage
    when there are more than FOLD_AT; ``ends``: rank -> when its step's last event ended. A
    folded row says how many ranks it stands for (``folded``); an outlier row says by how
    much its step end departs from its stage's median (``outlier``, a signed share)."""
    if len(rows) <= FOLD_AT:
        return rows
    stages: dict[int, list[dict]] = {}
    for r in rows:
        stages.setdefault(r["pp"], []).append(r)
    reps, candidates = [], []
    for stage in sorted(stages):
        members = stages[stage]
        seen = [r for r in members if r["rank"] in ends]
        mid = median(ends[r["rank"]] for r in seen) if seen else 0.0
        rep = min(seen or members, key=lambda r: (abs(ends.get(r["rank"], mid) - mid), r["rank"]))
        reps.append({**rep, "folded": len(members)})
        for r in seen:
            off = (ends[r["rank"]] - mid) / mid if mid > 0 else 0.0
            if r is not rep and abs(off) > OUTLIER_SHARE:
                candidates.append((-abs(off), r["rank"], {**r, "outlier": off}))
    outliers = [row for _, _, row in sorted(candidates)[:MAX_OUTLIERS]]
    return sorted(reps + outliers, key=lambda r: (r["pp"], "outlier" in r, r["rank"]))


def fold_summary(rows: list[dict], world: int) -> dict[str, int] | None:
    """What the page says of a folded timeline: ranks, rows, outliers; None when unfolded."""
    if not any("folded" in r for r in rows):
        return None
    outliers = sum(1 for r in rows if "outlier" in r)
    return {"ranks": world, "rows": len(rows), "outliers": outliers}
