"""Issue 26 item 10: the per-run summaries (app.live.summary) kept as rows are written equal
what counting the rows gives, through resends, out-of-order steps, resumes that supersede,
late records of a dead attempt, a row refused alone, a transaction that fails on a full
disk (SQLite's rollback takes the summaries back with the rows), and the migration of a
database written before the summaries existed."""

import json
import random
import sqlite3

import pytest
from support import records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.live import summary
from app.live.store import RowRejected, Store
from app.live.store_read import Reader

RUN = "sum"


@pytest.fixture
def db(tmp_path):
    store, reader = Store(tmp_path / "s.sqlite3"), Reader(tmp_path / "s.sqlite3")
    yield store, reader
    reader.close()
    store.close()


def _recs(info, steps, attempt=0, ranks=None, **kw) -> list[ProbeRecord]:
    out = []
    for step in steps:
        for rec in records(info, step, attempt=attempt, t0=100.0 + step, **kw):
            if ranks is None or rec["rank"] in ranks:
                out.append(ProbeRecord.model_validate(rec))
    return out


def _put(store, recs, now=1.0):
    return store.transaction([("record", (r, now)) for r in recs])


def assert_summaries_hold(reader, run=RUN):
    assert reader.summaries()
    assert reader.rank_rows(run) == reader.rank_rows(run, recount=True)
    assert reader.trend(run, 10**6) == reader.trend(run, 10**6, recount=True)
    assert reader.superseded(run) == reader.superseded(run, recount=True)
    as_sqlite_wrote_it = json.loads(reader.trend_json(run, 10**6))
    assert len(as_sqlite_wrote_it) == len(reader.trend(run, 10**6))
    for mine, theirs in zip(as_sqlite_wrote_it, reader.trend(run, 10**6), strict=True):
        assert mine.keys() == theirs.keys()
        for key, value in theirs.items():  # SQLite prints 15 significant digits
            assert mine[key] == (value if value is None else pytest.approx(value, rel=1e-14))
    listed = {r["run"]: (r["last_step"], r["records"]) for r in reader.runs()}
    rows = reader.rank_rows(run, recount=True)
    expected_last = max((s for _, s, _ in rows.values()), default=None)
    assert listed[run] == (expected_last, sum(n for _, _, n in rows.values()))


def test_summaries_follow_resends_resumes_and_late_records(db):
    store, reader = db
    info = run_info(RUN, dp=2, pp=2, steps=40)
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(4)])
    first = _recs(info, range(20), slow_rank=1)
    random.Random(7).shuffle(first)  # out of order, across ranks and steps
    for i in range(0, len(first), 13):
        _put(store, first[i : i + 13])
    assert_summaries_hold(reader)
    _put(store, first[:30])  # resent: stored nothing, counted nothing
    assert_summaries_hold(reader)
    # Ranks 0 and 3 resume at step 12 with attempt 1: their steps >= 12 of attempt 0 go.
    _put(store, _recs(info, range(12, 16), attempt=1, ranks={0, 3}, f=0.02))
    assert reader.superseded(RUN) == 2 * 8
    assert_summaries_hold(reader)
    # A late record of the dead attempt: stored superseded, counted in no trend.
    _put(store, _recs(info, [21], attempt=0, ranks={0}))
    assert_summaries_hold(reader)
    # A second resume of rank 0 from an earlier step, the other ranks' rows untouched.
    _put(store, _recs(info, range(5, 8), attempt=2, ranks={0}))
    assert_summaries_hold(reader)
    trend = {t["step"]: t for t in reader.trend(RUN)}
    assert trend[13]["ranks"] == 3 and trend[13]["attempt"] == 1  # rank 0's step 13 is gone
    assert trend[6]["ranks"] == 4 and trend[6]["attempt"] == 2


def test_a_row_refused_alone_leaves_no_count(db):
    store, reader = db
    info = run_info(RUN, pp=2, steps=10)
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(2)])
    good = _recs(info, range(3))
    poisoned = good[0].model_copy(update={"mem": 2**63, "step": 5})  # SQLite cannot hold it
    results = _put(store, [*good, poisoned])
    assert isinstance(results[-1], RowRejected)
    assert_summaries_hold(reader)
    assert 5 not in {t["step"] for t in reader.trend(RUN)}


def test_a_transaction_failing_on_a_full_disk_takes_its_counts_back(db):
    store, reader = db
    info = run_info(RUN, pp=2, steps=30)
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(2)])
    _put(store, _recs(info, range(10)))
    before = reader.rank_rows(RUN), reader.trend(RUN), reader.superseded(RUN)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    big = info.model_copy(update={"microbatches": 1000})  # ~160 KB records: the disk fills
    resume = _recs(info, [4], attempt=1, ranks={0}) + _recs(big, range(5, 9), attempt=1)
    with pytest.raises(sqlite3.OperationalError, match="full"):
        _put(store, resume)
    assert (reader.rank_rows(RUN), reader.trend(RUN), reader.superseded(RUN)) == before
    store.conn.execute("PRAGMA max_page_count = 1073741823")
    _put(store, resume)  # resent once there is room: as if nothing had failed
    assert reader.superseded(RUN) == 6 + 5  # rank 0 from step 4, rank 1 from step 5
    assert_summaries_hold(reader)


def test_an_older_database_is_migrated_once(tmp_path):
    path = tmp_path / "old.sqlite3"
    store = Store(path)
    info = run_info(RUN, pp=2, steps=20)
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(2)])
    _put(store, _recs(info, range(8)))
    _put(store, _recs(info, range(3, 6), attempt=1, ranks={1}))
    # As the previous release left it: no summary tables, user_version 0.
    for table in ("rank_summary", "step_summary", "run_summary"):
        store.conn.execute(f"DROP TABLE {table}")
    store.conn.execute("PRAGMA user_version = 0")
    store.close()
    reader = Reader(path)
    assert not reader.summaries()  # a read-only view of it would count rows, as before
    counted = reader.rank_rows(RUN), reader.trend(RUN), reader.superseded(RUN)
    store = Store(path)  # the writer migrates at start
    assert reader.summaries()
    assert (reader.rank_rows(RUN), reader.trend(RUN), reader.superseded(RUN)) == counted
    assert_summaries_hold(reader)
    _put(store, _recs(info, range(8, 10)))  # and keeps them from then on
    assert_summaries_hold(reader)
    version = store.conn.execute("PRAGMA user_version").fetchone()[0]
    assert version == summary.VERSION
    reader.close()
    store.close()
