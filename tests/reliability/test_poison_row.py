"""One producer's unstorable record must not fail another producer's commit (issue 13,
item 2). The store fails the bad row alone: its frame gets an error naming it, every other
record of the same group commit is acknowledged and stored, no connection is closed."""

import asyncio
import json
import sqlite3

import pytest
from support import TOKEN, ServerThread, poisoned_db, producers, record_frame, records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.live.store import SCHEMA, Outcome, RowRejected, Store
from app.live.writer import Writer
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)
STEPS = 8
POISONED_STEP = 2


def test_the_audits_record_fails_alone_inside_one_group_commit(tmp_path):
    """mem = 2**63 (what the audit sent; the protocol now refuses it, so the record is built
    past validation) in one transaction with two producers' healthy records."""
    info_a, info_b = run_info("producer-a", steps=10), run_info("producer-b", steps=10)
    healthy = [ProbeRecord.model_validate(r) for r in records(info_b, 0) + records(info_b, 1)]
    good_a = ProbeRecord.model_validate(records(info_a, 0)[0])
    poisoned = good_a.model_copy(update={"mem": 2**63, "step": 1})  # no validation: raw

    async def scenario():
        writer = Writer(Store(tmp_path / "m.sqlite3"), 512, lambda committed: None)
        writer.start()
        for info in (info_a, info_b):
            await writer.submit("hello", info, 0, 0, 1.0)
        before = writer.commits
        futures = [writer.submit("record", good_a, 2.0), writer.submit("record", poisoned, 2.0)]
        futures += [writer.submit("record", rec, 2.0) for rec in healthy]
        results = await asyncio.gather(*futures, return_exceptions=True)
        commits = writer.commits - before
        await writer.stop()
        return results, commits

    results, commits = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert commits == 1  # one group commit held them all
    assert isinstance(results[1], RowRejected) and "too large" in str(results[1])
    others = [results[0], *results[2:]]
    assert all(isinstance(r, Outcome) and r.stored for r in others)
    with sqlite3.connect(tmp_path / "m.sqlite3") as conn:
        rows = conn.execute("SELECT run, rank, step FROM steps ORDER BY run, rank, step")
        stored = rows.fetchall()
    assert stored == [("producer-a", 0, 0)] + [
        ("producer-b", rank, step) for rank in range(2) for step in range(2)
    ]


async def _replies_until(ws, last_step: int) -> list[dict]:
    out: list[dict] = []
    while not (out and out[-1]["type"] == "ack" and out[-1]["step"] == last_step):
        out.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
    return out


async def _two_producers(srv, db) -> tuple[list[dict], list[dict], dict]:
    info = run_info("shared", pp=2, steps=STEPS + 1)
    live = srv.app.state.live
    async with producers(srv.ws, info, 2) as (a, b):
        # Hold the write lock so both producers' records queue up into one group commit.
        blocker = sqlite3.connect(db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        sent = live.stats.frames + 2 * STEPS
        for step in range(STEPS):
            recs = records(info, step)
            await a.send(record_frame(recs[0]))
            await b.send(record_frame(recs[1]))
        while live.stats.frames < sent:
            await asyncio.sleep(0.01)
        blocker.execute("ROLLBACK")
        blocker.close()
        replies_a = await _replies_until(a, STEPS - 1)
        replies_b = await _replies_until(b, STEPS - 1)
        await a.send(record_frame(records(info, STEPS)[0]))  # the connection still works
        after = json.loads(await asyncio.wait_for(a.recv(), 20))
    return replies_a, replies_b, after


def test_a_poisoned_record_is_refused_alone_and_the_other_producer_is_acked(tmp_path):
    db = tmp_path / "m.sqlite3"
    poisoned_db(db, SCHEMA, POISONED_STEP)
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as srv:
        replies_a, replies_b, after = asyncio.run(_two_producers(srv, db))
    errors_a = [r for r in replies_a if r["type"] == "error"]
    assert len(errors_a) == 1 and errors_a[0]["code"] == "bad_frame"
    assert not errors_a[0]["fatal"]
    assert f"step {POISONED_STEP}" in errors_a[0]["message"]
    assert "poisoned row" in errors_a[0]["message"]
    assert all(r["type"] == "ack" for r in replies_b)  # never "internal", never closed
    assert after == {"type": "ack", "run": "shared", "rank": 0, "attempt": 0, "step": STEPS}
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT rank, step FROM steps ORDER BY rank, step").fetchall()
    expected_a = [(0, s) for s in range(STEPS + 1) if s != POISONED_STEP]
    assert rows == expected_a + [(1, s) for s in range(STEPS)]
