"""The store's per-transaction work (issue 26 item 11): the run's row takes its records'
times once per transaction, and a record refused in its savepoint takes its time back; the
first records of a run are no resume (nothing superseded, summaries equal to a recount)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support import records, run_info

from app.core.fidelity.measured import breakdown
from app.core.inputs.protocol import ProbeRecord
from app.live import summary
from app.live.store import Outcome, RowRejected, Store

pytestmark = pytest.mark.timeout(60)
INFO = run_info("batch", dp=2, tp=1, pp=2, steps=10)


def _recs(step: int, t0: float) -> list[ProbeRecord]:
    return [ProbeRecord.model_validate(r) for r in records(INFO, step, t0=t0)]


def _run_row(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT updated, last_event FROM runs WHERE run = 'batch'").fetchone()


def test_a_transaction_of_records_moves_the_run_to_its_latest_event(tmp_path):
    store = Store(tmp_path / "b.sqlite3")
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    recs = _recs(0, t0=100.0) + _recs(1, t0=50.0)  # the later step started earlier
    results = store.transaction([("record", (r, 2.0 + i)) for i, r in enumerate(recs)])
    assert all(isinstance(o, Outcome) and o.stored for o in results)
    latest = max(r.t0 + breakdown(r).step_time_s for r in recs)
    assert _run_row(tmp_path / "b.sqlite3") == (2.0 + len(recs) - 1, latest)
    store.close()


def test_a_refused_record_takes_its_time_back_with_its_row(tmp_path):
    store = Store(tmp_path / "b.sqlite3")
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    good = _recs(0, t0=100.0)
    late = _recs(1, t0=900.0)[0].model_copy(update={"mem": 2**63})  # SQLite refuses it
    results = store.transaction([("record", (r, 2.0)) for r in good] + [("record", (late, 9.0))])
    assert isinstance(results[-1], RowRejected)
    latest = max(r.t0 + breakdown(r).step_time_s for r in good)
    assert _run_row(tmp_path / "b.sqlite3") == (2.0, latest)
    store.close()


def test_first_records_supersede_nothing_and_keep_the_summaries_exact(tmp_path):
    path = tmp_path / "b.sqlite3"
    store = Store(path)
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    for step in range(3):
        outcomes = store.transaction([("record", (r, 2.0)) for r in _recs(step, t0=10.0)])
        assert [o.done is not None for o in outcomes] == [False, False, False, True]
    store.close()
    _summaries_match_a_recount(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM steps WHERE superseded = 1").fetchone() == (0,)


def _summaries_match_a_recount(path) -> None:
    with sqlite3.connect(path) as conn:
        kept = conn.execute("SELECT * FROM step_summary ORDER BY step").fetchall()
        recount = conn.execute(summary.RECOMPUTE_STEPS + " ORDER BY step", ("batch", 0))
        assert kept == recount.fetchall()
        ranks = conn.execute("SELECT * FROM rank_summary ORDER BY rank").fetchall()
        assert ranks == conn.execute(summary.RECOMPUTE_RANKS, ("batch", None)).fetchall()


def test_a_resume_inside_the_transaction_that_wrote_its_steps_recounts_them(tmp_path):
    """Steps 0-3 of attempt 0, then attempt 1 from step 1, a resend and a refused row, all
    in one transaction: the folded step counts and the recount must not both count."""
    path = tmp_path / "b.sqlite3"
    store = Store(path)
    store.transaction([("hello", (INFO, r, a, 1.0)) for r in range(4) for a in (0, 1)])
    first = [r for step in range(4) for r in _recs(step, t0=10.0)]
    again = [r for step in range(1, 4) for r in _recs(step, t0=20.0)]
    again = [r.model_copy(update={"attempt": 1}) for r in again]
    bad = again[0].model_copy(update={"step": 5, "mem": 2**63})
    ops = [("record", (r, 2.0)) for r in [*first, *again, again[3], bad]]
    results = store.transaction(ops)
    assert isinstance(results[-1], RowRejected)
    assert results[-2].stored is False  # the resend
    done = [o.done.step for o in results[:-2] if o.done is not None]
    assert done == [0, 1, 2, 3, 1, 1, 1, 1, 2, 3]  # each rank's resume recounts step 1
    store.close()
    _summaries_match_a_recount(path)
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT step, ranks, attempt FROM step_summary ORDER BY step")
        assert rows.fetchall() == [(0, 4, 0), (1, 4, 1), (2, 4, 1), (3, 4, 1)]


def test_a_page_of_steps_splices_the_stored_json_into_the_page_it_parses_to(tmp_path):
    """Reader.steps_text gives the rows as stored, so a page is joined, not parsed and
    dumped (issue 26 item 2: one json.dumps of an 18 MB page held the GIL ~2 s)."""
    from app.live.store_read import Reader

    path = tmp_path / "b.sqlite3"
    store = Store(path)
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    for step in range(3):
        store.transaction([("record", (r, 2.0)) for r in _recs(step, t0=10.0)])
    reader = Reader(path)
    texts, next_since = reader.steps_text("batch", 0, 4)
    records, same = reader.steps("batch", 0, 4)
    assert (len(texts), next_since, same) == (4, 1, 1)
    spliced = json.loads('{"records":[' + ",".join(texts) + "]}")["records"]
    assert spliced == records == [r.model_dump(mode="json", exclude_none=True)
                                  for r in _recs(1, t0=10.0)]  # fmt: skip
    reader.close()
    store.close()
