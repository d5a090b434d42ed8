"""A full disk in the middle of a resume must not leave two current rows per step (issue 26,
item 6). The resumed attempt's records fail to commit with SQLITE_FULL, which SQLite rolls
back by itself; once the disk has room the producer resends them, and they must mark the
dead attempt's rows superseded as if the failure had never happened. Before the fix the
store's own ROLLBACK raised "no transaction is active", the attempt's cached start step
outlived the rollback, and 10 of 10 steps ended with two current rows (the trend counted 2
ranks per step of a 1-rank run).

The "small disk" is SQLite's own page cap on the store's connection (PRAGMA
max_page_count): the same SQLITE_FULL a full filesystem gives, without root or a mount."""

import asyncio
import json
import sqlite3

import pytest
from support import AUTH, TOKEN, ServerThread, get_json, hello, record_frame, records, run_info
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)
STEPS = 10
ROOM_PAGES = 10  # room left on the "disk": a small record fits, a big one does not


def _records(info, attempt: int) -> list[dict]:
    """Every step of rank 0. Attempt 1's first record is small and the rest are ~160 KB
    (2,000 events, ~40 pages each), so in one transaction the first is stored, sets the
    attempt's start step and supersedes the old rows, and the second finds the disk full."""
    big = info.model_copy(update={"microbatches": 1000})
    return [
        records(big if attempt and step else info, step, attempt=attempt, t0=100.0 * step)[0]
        for step in range(STEPS)
    ]


async def _send(srv, info, attempt: int, frames: list[str], hold=None) -> list[dict]:
    """Hello with ``attempt``, then ``frames``; the replies until the last step's ack or
    until the server closes the connection. ``hold``: a coroutine run after the hello that
    returns a SQLite connection holding the write lock: the writer takes the first frame
    alone and waits for the lock, the others queue up behind it, and once every one is in
    the lock is let go, so they all go into the next group commit (one transaction)."""
    replies: list[dict] = []
    last = {"type": "ack", "run": info.run, "rank": 0, "attempt": attempt, "step": STEPS - 1}
    live = srv.app.state.live
    async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
        await ws.send(hello(info, 0, attempt))
        replies.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        before = live.stats.frames
        blocker = await hold() if hold else None
        for i, frame in enumerate(frames):
            await ws.send(frame)
            if blocker is not None and i == 0:  # the writer takes it alone, then waits
                await _until(lambda: live.stats.frames >= before + 1 and not live.writer.queue)
        await _until(lambda: live.stats.frames >= before + len(frames))
        if blocker is not None:
            blocker.execute("ROLLBACK")
            blocker.close()
        try:
            while replies[-1] != last:
                replies.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        except ConnectionClosed:
            pass
    return replies


async def _until(predicate, timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.005)


def _current_rows(db) -> dict[tuple[int, int], int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT rank, step, COUNT(*) FROM steps WHERE superseded = 0 GROUP BY rank, step"
        ).fetchall()
    return {(rank, step): n for rank, step, n in rows}


def test_a_resume_that_hits_a_full_disk_and_is_resent_keeps_one_current_row_per_step(tmp_path):
    db = tmp_path / "small-disk.sqlite3"
    info = run_info("full-disk", pp=1, steps=STEPS)
    resumed = [record_frame(r) for r in _records(info, 1)]
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as srv:
        live = srv.app.state.live
        conn = live.store.conn  # the writer's connection, only ever used on its thread

        def cap_pages(extra: int | None) -> None:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + extra if extra else 2**30}")

        async def fill_disk_and_hold():
            await live.writer.call(cap_pages, ROOM_PAGES)
            blocker = sqlite3.connect(db, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            return blocker

        async def scenario():
            first = await _send(srv, info, 0, [record_frame(r) for r in _records(info, 0)])
            # A resend of attempt 0's last step goes first: the writer takes it alone and
            # waits for the lock, so the resumed records all queue into the next commit.
            again = record_frame(_records(info, 0)[-1])
            failed = await _send(srv, info, 1, [again, *resumed], hold=fill_disk_and_hold)
            await live.writer.call(cap_pages, None)  # the disk has room again
            resent = await _send(srv, info, 1, resumed)
            return first, failed, resent

        first, failed, resent = asyncio.run(asyncio.wait_for(scenario(), 45))
        trend = get_json(srv.base, "/api/runs/full-disk")["trend"]
    assert first[-1] == {"type": "ack", "run": "full-disk", "rank": 0, "attempt": 0, "step": 9}
    # The full disk reached the producer as a failed write, and nothing of it was acked.
    assert [r["code"] for r in failed if r["type"] == "error"] == ["internal"]
    assert [r for r in failed if r["type"] == "ack" and r["attempt"] == 1] == []
    assert resent[0]["type"] == "ack" and (resent[0]["attempt"], resent[0]["step"]) == (0, 9)
    assert resent[-1]["type"] == "ack" and (resent[-1]["attempt"], resent[-1]["step"]) == (1, 9)
    assert _current_rows(db) == {(0, step): 1 for step in range(STEPS)}
    with sqlite3.connect(db) as conn:  # the dead attempt's rows are kept, marked
        kept = conn.execute("SELECT attempt, superseded, COUNT(*) FROM steps GROUP BY 1, 2")
        assert kept.fetchall() == [(0, 1, STEPS), (1, 0, STEPS)]
    assert sorted(t["step"] for t in trend) == list(range(STEPS))
    assert {t["ranks"] for t in trend} == {1}


def test_a_failed_transaction_leaves_the_stores_caches_as_they_were(tmp_path):
    """The same fault on the store alone: its caches after the failed commit equal those
    before it, whatever SQLite did with the transaction."""
    from app.core.inputs.protocol import ProbeRecord
    from app.live.store import Store

    store = Store(tmp_path / "s.sqlite3")
    info = run_info("caches", pp=1, steps=STEPS)

    def ops(attempt):
        recs = [ProbeRecord.model_validate(r) for r in _records(info, attempt)]
        return [("record", (rec, 1.0)) for rec in recs]

    store.transaction([("hello", (info, 0, 0, 1.0)), *ops(0)])
    before = ({k: dict(v) for k, v in store._starts.items()}, dict(store._world))
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + ROOM_PAGES}")
    with pytest.raises(sqlite3.OperationalError, match="full"):
        store.transaction([("hello", (info, 0, 1, 2.0)), *ops(1)])
    assert not store.conn.in_transaction
    assert ({k: dict(v) for k, v in store._starts.items()}, dict(store._world)) == before
    store.close()
