"""Cheaper ingest, same summaries (issue 26 item 11): a transaction writes a rank's summary
once however many of its records it holds (a records frame's records are one rank's), and
what it writes stays equal to a recount from the rows through a resume of that rank inside
the transaction and through a record refused in its savepoint."""

from __future__ import annotations

import sqlite3

import pytest
from support import records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.live import summary
from app.live.store import Outcome, RowRejected, Store

pytestmark = pytest.mark.timeout(60)
INFO = run_info("fold", dp=2, tp=1, pp=2, steps=40)


def _rec(rank: int, step: int, attempt: int = 0, **update) -> ProbeRecord:
    rec = ProbeRecord.model_validate(records(INFO, step, attempt, t0=10.0 + step)[rank])
    return rec.model_copy(update=update) if update else rec


def _kept(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM rank_summary ORDER BY run, rank").fetchall()


def _recounted(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute(summary.RECOMPUTE_RANKS, ("fold", None)).fetchall())


def _steps_kept_and_recounted(path) -> tuple[list, list]:
    with sqlite3.connect(path) as conn:
        kept = conn.execute("SELECT * FROM step_summary ORDER BY step").fetchall()
        again = sorted(conn.execute(summary.RECOMPUTE_STEPS, ("fold", 0)).fetchall())
    return kept, again


def _store(tmp_path) -> Store:
    store = Store(tmp_path / "f.sqlite3")
    store.transaction([("hello", (INFO, r, 0, 1.0)) for r in range(4)])
    return store


def test_one_rank_summary_write_per_rank_and_transaction(tmp_path):
    store = _store(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    ops = [("record", (_rec(rank, s), 2.0)) for rank in (0, 1) for s in range(16)]
    assert all(isinstance(o, Outcome) and o.stored for o in store.transaction(ops))
    store.conn.set_trace_callback(None)
    upserts = [s for s in statements if "INTO rank_summary" in s]
    assert len(upserts) == 2  # one a rank, where it was one a record (32)
    kept = _kept(tmp_path / "f.sqlite3")
    assert kept == _recounted(tmp_path / "f.sqlite3")
    assert [(r[1], r[2], r[3], r[4]) for r in kept] == [(0, 0, 15, 16), (1, 0, 15, 16)]
    store.close()


def test_a_resume_inside_the_transaction_recounts_the_rank_and_keeps_later_records(tmp_path):
    path = tmp_path / "f.sqlite3"
    store = _store(tmp_path)
    store.transaction([("record", (_rec(rank, s), 2.0)) for rank in (0, 1) for s in range(8)])
    # Rank 0's later steps of attempt 0, then its attempt 1 from step 3 on (marking 3..9
    # superseded), then more of attempt 1; rank 1 goes on beside it.
    ops = [("record", (_rec(0, s), 3.0)) for s in (8, 9)]
    ops += [("record", (_rec(0, s, attempt=1), 3.0)) for s in (3, 4, 5)]
    ops += [("record", (_rec(1, s), 3.0)) for s in (8, 9, 10)]
    assert all(o.stored for o in store.transaction(ops))
    kept = _kept(path)
    assert kept == _recounted(path)
    assert [(r[1], r[2], r[3], r[4]) for r in kept] == [(0, 1, 5, 6), (1, 0, 10, 11)]
    kept_steps, recounted_steps = _steps_kept_and_recounted(path)
    assert kept_steps == recounted_steps
    store.close()


def test_a_record_refused_in_its_savepoint_takes_its_rank_count_back(tmp_path):
    path = tmp_path / "f.sqlite3"
    store = _store(tmp_path)
    ops = [("record", (_rec(2, s), 2.0)) for s in range(4)]
    ops.insert(2, ("record", (_rec(2, 9, mem=2**63), 2.0)))  # SQLite cannot hold it
    results = store.transaction(ops)
    assert isinstance(results[2], RowRejected)
    assert all(isinstance(o, Outcome) and o.stored for i, o in enumerate(results) if i != 2)
    kept = _kept(path)
    assert kept == _recounted(path)
    assert [(r[1], r[2], r[3], r[4]) for r in kept] == [(2, 0, 3, 4)]  # not step 9, not 5 rows
    store.close()
