"""The store's per-record fast path (issue 26 item 11): the step split the store keeps is the
plain labelled sweep's, to the last bit, and a batch that fails whole (a fault of the store,
not of one row) leaves nothing of itself behind in the caches that skip the undo log."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import records, run_info

from app.core.fidelity import measured
from app.core.inputs.protocol import Coord, ProbeEvent, ProbeRecord
from app.live import summary
from app.live.store import Store

pytestmark = pytest.mark.timeout(60)
INFO = run_info("fast", dp=2, tp=1, pp=2, steps=10)
LEVEL = {"tp": 6, "cp": 5, "ep": 4, "dp": 3, "pp_recv": 2, "F": 1, "B": 1, "W": 1, "optim": 1}


def _reference(events: list[dict]) -> list[float]:
    """The sweep as it was written before the fast path: a list of counts per level, the
    highest open level takes each segment. [host, compute, pp_wait, dp, ep, cp, tp, end]."""
    marks = sorted(
        [(e["start"], 1, LEVEL[e["kind"]]) for e in events if e["kind"] in LEVEL]
        + [(e["end"], -1, LEVEL[e["kind"]]) for e in events if e["kind"] in LEVEL],
        key=lambda m: m[0],
    )
    n, spent, prev = [0] * 7, [0.0] * 8, 0.0
    for t, delta, level in marks:
        if t > prev:
            spent[max((lv for lv in range(7) if n[lv]), default=0)] += t - prev
            prev = t
        n[level] += delta
    spent[7] = prev
    return spent


interval = st.tuples(
    st.sampled_from(["F", "B", "W", "tp", "pp_recv", "pp_send", "dp", "optim", "cp", "ep"]),
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5]) | st.floats(0, 10, allow_nan=False),
    st.sampled_from([0.0, 0.25, 1.0]) | st.floats(0, 5, allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(interval, max_size=30))
def test_the_split_is_the_plain_sweeps_to_the_last_bit(items):
    events = [{"kind": k, "start": s, "end": s + d} for k, s, d in items]
    rec = ProbeRecord(
        run="m", rank=0, coord=Coord(dp=0, pp=0, tp=0), node=0, step=0, t0=1.0,
        events=[ProbeEvent(**e) for e in events],
    )  # fmt: skip
    split = measured.split(rec)
    assert list(split) == _reference(events)  # exact: the stored columns do not move
    b = measured.breakdown(rec)
    assert (b.step_time_s, b.compute_s, b.tp_s, b.cp_s, b.ep_s, b.dp_s, b.pp_wait_s, b.host_s) == (
        split.step_time_s, split.compute_s, split.tp_s, split.cp_s, split.ep_s, split.dp_s,
        split.pp_wait_s, split.host_s,
    )  # fmt: skip
    assert (split.idle_frac, split.comm_frac) == (b.idle_frac, b.comm_frac)


def _recs(step: int, t0: float) -> list[ProbeRecord]:
    return [ProbeRecord.model_validate(r) for r in records(INFO, step, t0=t0)]


class _DiskFault(sqlite3.OperationalError):
    pass


def test_a_batch_that_fails_whole_leaves_no_times_or_counts_behind(tmp_path, monkeypatch):
    """The folds and the run's times of a whole batch are set without the undo log; a
    fault of the store (not of one row: no op-by-op retry) must drop them with the rows."""
    path = tmp_path / "f.sqlite3"
    store = Store(path)
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    late = _recs(0, t0=900.0)

    def disk_full(*args):
        raise _DiskFault("database or disk is full")

    monkeypatch.setattr(store, "_event", disk_full)
    with pytest.raises(sqlite3.OperationalError):
        store.transaction([("record", (r, 50.0)) for r in late] + [("event", ("fast",))])
    monkeypatch.undo()
    early = _recs(0, t0=100.0)  # the same step again: the failed batch stored nothing
    outcomes = store.transaction([("record", (r, 2.0)) for r in early])
    assert all(o.stored for o in outcomes) and outcomes[-1].done is not None
    store.close()
    latest = max(r.t0 + measured.split(r).step_time_s for r in early)
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT updated, last_event FROM runs WHERE run = 'fast'").fetchone()
        assert row == (2.0, latest)  # not the failed batch's 50.0 and t0 = 900
        kept = conn.execute(summary.RECOMPUTE_STEPS, ("fast", 0)).fetchall()
        held = conn.execute("SELECT run, step, step_time_s, ranks, attempt, loss FROM"
                            " step_summary WHERE run = 'fast'").fetchall()  # fmt: skip
        assert held == kept and held[0][3] == 4  # four ranks, not eight


@pytest.mark.parametrize("losses", [(None, 2.0, None, 1.5), (2.0, None, 1.5, None), (None,) * 4,
                                    (1.5, 2.0, 2.0, None), (None, None, 2.5, 0.5)])  # fmt: skip
def test_a_steps_folded_counts_equal_its_recount_whatever_the_order(tmp_path, losses):
    """The folds' max and min are written out (no builtin calls): the slowest time, the
    highest attempt and the least loss (a NULL leaves the other, as MIN does) of a step
    whose rows come in one transaction must be what a recount of its rows says."""
    path = tmp_path / "o.sqlite3"
    store = Store(path)
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    recs = [
        r.model_copy(update={"loss": loss}) for r, loss in zip(_recs(0, 10.0), losses, strict=True)
    ]
    store.transaction([("record", (r, 2.0)) for r in recs])
    store.close()
    with sqlite3.connect(path) as conn:
        held = conn.execute("SELECT run, step, step_time_s, ranks, attempt, loss FROM"
                            " step_summary").fetchall()  # fmt: skip
        assert held == conn.execute(summary.RECOMPUTE_STEPS, ("fast", 0)).fetchall()
        expect = min((x for x in losses if x is not None), default=None)
        assert held[0][5] == expect and held[0][3] == 4
