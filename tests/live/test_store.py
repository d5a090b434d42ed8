"""The SQLite store: idempotent on (run, rank, step, attempt), a resume supersedes the dead
attempt's later steps, the hello cursor is the protocol's, and what is committed survives."""

import pytest
from support import records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.live.store import Store
from app.live.store_read import Reader


@pytest.fixture
def db(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    reader = Reader(tmp_path / "s.sqlite3")
    yield store, reader
    reader.close()
    store.close()


def _put(store, info, steps, attempt=0, ranks=None):
    ops = []
    for step in steps:
        for rec in records(info, step, attempt=attempt, t0=1000.0 + step):
            if ranks is None or rec["rank"] in ranks:
                ops.append(("record", (ProbeRecord.model_validate(rec), 1.0)))
    return store.transaction(ops)


def test_hello_creates_the_run_and_answers_the_stored_cursor(db):
    store, reader = db
    info = run_info("r1", pp=2, steps=10)
    (welcome,) = store.transaction([("hello", (info, 0, 0, 1.0))])
    assert welcome.cursor is None and welcome.conflict is None
    _put(store, info, range(3))
    (welcome,) = store.transaction([("hello", (info, 1, 0, 2.0))])
    assert welcome.cursor == (0, 2)
    assert reader.run("r1")["world"] == 2


def test_a_hello_with_another_config_is_refused_without_failing_the_batch(db):
    store, reader = db
    store.transaction([("hello", (run_info("r2", pp=2), 0, 0, 1.0))])
    other = run_info("r2", pp=4)
    info = run_info("r3", pp=2)
    conflict, fine = store.transaction(
        [("hello", (other, 0, 0, 1.0)), ("hello", (info, 0, 0, 1.0))]
    )
    assert "pp: stored 2, hello 4" in conflict.conflict
    assert fine.conflict is None and reader.run("r3") is not None


def test_resending_stores_nothing_twice(db):
    store, reader = db
    info = run_info("r4", pp=2)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    first = _put(store, info, range(4))
    again = _put(store, info, range(4))
    assert all(o.stored for o in first) and not any(o.stored for o in again)
    recs, _ = reader.steps("r4", -1, 1000)
    assert len(recs) == 8
    assert len({(r["rank"], r["step"]) for r in recs}) == 8


def test_the_last_rank_of_a_step_completes_it(db):
    store, _ = db
    info = run_info("r5", dp=2, pp=2)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    outcomes = _put(store, info, [0])
    assert [o.done is not None for o in outcomes] == [False, False, False, True]
    assert outcomes[-1].done.step == 0


def test_a_resume_supersedes_the_dead_attempts_steps_from_the_resume_point(db):
    store, reader = db
    info = run_info("r6", pp=2, steps=10)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    _put(store, info, range(8))  # attempt 0 died after step 7; checkpoint at step 5
    _put(store, info, [5, 6], attempt=1)  # the resumed attempt re-runs from step 5
    trend = {p["step"]: p for p in reader.trend("r6")}
    assert [trend[s]["attempt"] for s in range(7)] == [0, 0, 0, 0, 0, 1, 1]
    assert 7 not in trend  # the dead attempt's step 7 is superseded, not mixed in
    assert reader.superseded("r6") == 6  # steps 5, 6, 7 of attempt 0, two ranks each
    (welcome,) = store.transaction([("hello", (info, 0, 1, 2.0))])
    assert welcome.cursor == (1, 6)


def test_a_late_record_of_a_dead_attempt_is_kept_but_not_served(db):
    store, reader = db
    info = run_info("r7", pp=2, steps=10)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    _put(store, info, [3], attempt=1)
    (late,) = _put(store, info, [4], attempt=0, ranks={0})
    assert late.stored and late.superseded
    assert [r["step"] for r in reader.steps("r7", -1, 100)[0]] == [3, 3]


def test_steps_page_by_whole_steps(db):
    store, reader = db
    info = run_info("r8", dp=2, pp=2, steps=10)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    _put(store, info, range(5))
    recs, nxt = reader.steps("r8", -1, 6)  # 6 records: one whole step of 4, then stop
    assert {r["step"] for r in recs} == {0} and nxt == 0
    recs, nxt = reader.steps("r8", 2, 100)
    assert {r["step"] for r in recs} == {3, 4} and nxt is None


def test_committed_rows_survive_reopening(tmp_path):
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    info = run_info("r9", pp=2)
    store.transaction([("hello", (info, 0, 0, 1.0))])
    _put(store, info, range(3))
    store.close()  # no checkpoint, no clean shutdown of readers: the WAL has it
    reader = Reader(path)
    assert len(reader.steps("r9", -1, 100)[0]) == 6
    reader.close()
