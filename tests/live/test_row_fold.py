"""The measured timeline folds its rows past FOLD_AT ranks (issue 25, scale): one row per
pipeline stage standing for its peers, plus the outliers; a slow rank keeps its own row,
and a small run draws every rank as before."""

from support import records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.core.views.row_fold import FOLD_AT, MAX_OUTLIERS, fold_rows
from app.live import analysis


def _analyse(info, slow_rank=None):
    recs = [ProbeRecord.model_validate(r) for r in records(info, 1, t0=0.0, slow_rank=slow_rank)]
    return analysis.analyse(info, recs, 1)


def test_a_small_run_draws_every_rank_unfolded():
    info = run_info("small", dp=4, tp=2, pp=2, m=4)
    a = _analyse(info, slow_rank=3)
    assert len(a["rows"]) == 16 and a["fold"] is None
    assert not any("folded" in r or "outlier" in r for r in a["rows"])


def test_1024_ranks_fold_to_a_row_per_stage_and_the_slow_rank():
    info = run_info("big", dp=128, tp=4, pp=2, m=4)
    slow = 517
    a = _analyse(info, slow_rank=slow)
    reps = [r for r in a["rows"] if "folded" in r]
    assert [r["pp"] for r in reps] == [0, 1] and sum(r["folded"] for r in reps) == 1024
    outliers = [r for r in a["rows"] if "outlier" in r]
    # The stretched rank ends 1.5x its stage's median: its own row, the first outlier.
    assert outliers and outliers[0]["rank"] == slow and outliers[0]["outlier"] > 0.4
    assert a["fold"] == {"ranks": 1024, "rows": len(a["rows"]), "outliers": len(outliers)}
    # Only the drawn rows' events travel; every rank is still in the heatmap.
    drawn = {r["rank"] for r in a["rows"]}
    assert {e["rank"] for e in a["measured"]["events"]} == drawn
    assert sum(len(row) for row in a["heatmap"]["ranks"]) == 1024


def _rows(n, pp=2):
    return [{"rank": r, "dp": r // pp, "pp": r % pp, "tp": 0, "node": 0} for r in range(n)]


def test_the_representative_is_the_median_rank_and_outliers_are_capped():
    rows = _rows(FOLD_AT * 4)
    ends = {r["rank"]: 1.0 for r in rows}
    for k in range(40):  # 40 ranks 10-49% late: only the MAX_OUTLIERS latest are kept
        ends[2 * k] = 1.1 + k / 100
    out = fold_rows(rows, ends)
    late = [r["rank"] for r in out if "outlier" in r]
    assert len(late) == MAX_OUTLIERS
    assert set(late) == {2 * k for k in range(40 - MAX_OUTLIERS, 40)}
    reps = {r["pp"]: r for r in out if "folded" in r}
    assert ends[reps[0]["rank"]] == 1.0 and reps[0]["folded"] == FOLD_AT * 2
    assert fold_rows(_rows(FOLD_AT), ends) == _rows(FOLD_AT)  # at the bound: unfolded
