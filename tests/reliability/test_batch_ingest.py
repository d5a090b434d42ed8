"""A records frame on /ws/ingest (issue 26 item 11: several records of the hello's rank in one
frame, one frame's cost on the server): every record stored exactly once and acked, a poison
record fails alone, a malformed batch is refused as one bad frame naming the field, a resend
is idempotent, and the handshake offers batching so a sender knows it may batch."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import msgspec
import pytest
from pydantic import ValidationError
from support import AUTH, TOKEN, ServerThread, hello, poisoned_db, records, run_info
from test_fast_protocol import BASE, _mutations
from websockets.asyncio.client import connect

from app.core.inputs import protocol_fast
from app.core.inputs.protocol import BATCH_HEADER, MAX_BATCH_RECORDS, RecordsFrame, parse_frame
from app.live.config import LiveConfig
from app.live.schema import SCHEMA
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(90)
STEPS = 12
POISONED_STEP = 5


def _batch(recs: list[dict]) -> str:
    return json.dumps({"type": "records", "records": recs})


def _rank_steps(info, rank: int, steps) -> list[dict]:
    return [records(info, s, t0=1.0e9 + s)[rank] for s in steps]


async def _until_ack(ws, step: int) -> list[dict]:
    """Replies up to the ack of ``step`` (acks are cumulative: one covers the ones before)."""
    out: list[dict] = []
    while not (out and out[-1]["type"] == "ack" and out[-1]["step"] == step):
        out.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
    return out


def _rows(db, run: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        q = "SELECT rank, step, attempt FROM steps WHERE run = ? ORDER BY rank, step"
        return conn.execute(q, (run,)).fetchall()


def _serve(db):
    return ServerThread(create_app(Settings(db=db, ingest_token=TOKEN)))


async def _open(srv, info, rank: int):
    ws = await connect(srv.ws + "/ws/ingest", additional_headers=AUTH)
    await ws.send(hello(info, rank))
    first = json.loads(await asyncio.wait_for(ws.recv(), 20))
    return ws, first


def test_a_batch_stores_every_record_once_and_a_resend_is_idempotent(tmp_path):
    db = tmp_path / "m.sqlite3"
    info = run_info("batched", pp=2, steps=STEPS)

    async def scenario(srv):
        ws, _ = await _open(srv, info, 1)
        offered = ws.response.headers.get(BATCH_HEADER)
        await ws.send(_batch(_rank_steps(info, 1, range(STEPS))))
        first = await _until_ack(ws, STEPS - 1)
        await ws.send(_batch(_rank_steps(info, 1, range(STEPS))))  # the same batch again
        again = await _until_ack(ws, STEPS - 1)
        await ws.close()
        ws, cursor = await _open(srv, info, 1)  # the hello's cursor says all is stored
        await ws.close()
        return offered, first, again, cursor, srv.app.state.live.stats

    with _serve(db) as srv:
        offered, first, again, cursor, stats = asyncio.run(scenario(srv))
    assert offered == str(MAX_BATCH_RECORDS)
    assert all(r["type"] == "ack" for r in first + again)  # no error frame, no strike
    assert cursor["step"] == STEPS - 1
    assert _rows(db, "batched") == [(1, s, 0) for s in range(STEPS)]  # each exactly once
    assert stats.records == STEPS and stats.duplicates == STEPS


def test_a_poison_record_in_a_batch_fails_alone(tmp_path):
    db = tmp_path / "m.sqlite3"
    poisoned_db(db, SCHEMA, POISONED_STEP)
    info = run_info("poisoned", pp=2, steps=STEPS + 1)

    async def scenario(srv):
        ws, _ = await _open(srv, info, 0)
        await ws.send(_batch(_rank_steps(info, 0, range(STEPS))))
        replies = await _until_ack(ws, STEPS - 1)
        await ws.send(_batch(_rank_steps(info, 0, [STEPS])))  # the connection goes on
        after = await _until_ack(ws, STEPS)
        await ws.close()
        return replies, after

    with _serve(db) as srv:
        replies, after = asyncio.run(scenario(srv))
    errors = [r for r in replies if r["type"] == "error"]
    assert len(errors) == 1 and not errors[0]["fatal"]
    assert f"step {POISONED_STEP}" in errors[0]["message"]
    assert "poisoned row" in errors[0]["message"]
    assert after[-1]["type"] == "ack"
    stored = [s for _, s, _ in _rows(db, "poisoned")]
    assert stored == [s for s in range(STEPS + 1) if s != POISONED_STEP]


def test_a_malformed_batch_is_refused_naming_the_field_and_counts_one_strike(tmp_path):
    db = tmp_path / "m.sqlite3"
    info = run_info("malformed", pp=2, steps=STEPS)

    async def scenario(srv):
        ws, _ = await _open(srv, info, 0)
        recs = _rank_steps(info, 0, range(4))
        recs[2] = recs[2] | {"step": -1}  # one bad record: the whole frame is refused
        await ws.send(_batch(recs))
        refused = json.loads(await asyncio.wait_for(ws.recv(), 20))
        too_many = _rank_steps(info, 0, [0]) * (MAX_BATCH_RECORDS + 1)
        await ws.send(_batch(too_many))
        over_cap = json.loads(await asyncio.wait_for(ws.recv(), 20))
        # A well-formed batch with one record of another rank: that record is refused,
        # the rest stored, and the frame is one strike.
        mixed = _rank_steps(info, 0, range(3)) + _rank_steps(info, 1, [3])
        await ws.send(_batch(mixed))
        mixed_replies = await _until_ack(ws, 2)
        while not any(r["type"] == "error" for r in mixed_replies):
            mixed_replies.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
        await ws.send(_batch(_rank_steps(info, 0, [3])))  # still open: 3 strikes of 10
        alive = await _until_ack(ws, 3)
        for _ in range(10):  # ten bad frames close it with 1008, as single frames would
            await ws.send(_batch(recs))
        closing = []
        try:
            while True:
                closing.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
        except Exception as closed:  # noqa: BLE001 - the close is what is awaited
            code = getattr(getattr(closed, "rcvd", None), "code", None)
        return refused, over_cap, mixed_replies, alive, closing, code

    with _serve(db) as srv:
        refused, over_cap, mixed, alive, closing, code = asyncio.run(scenario(srv))
    assert refused["type"] == "error" and not refused["fatal"]
    assert "records.2.step" in refused["message"]
    assert over_cap["type"] == "error" and not over_cap["fatal"]
    assert "records" in over_cap["message"] and str(MAX_BATCH_RECORDS) in over_cap["message"]
    errors = [r for r in mixed if r["type"] == "error"]
    assert len(errors) == 1 and "records.3" in errors[0]["message"]
    assert "rank 0" in errors[0]["message"] and not errors[0]["fatal"]
    assert alive[-1]["type"] == "ack"
    assert closing[-1]["fatal"] and code == 1008
    assert _rows(db, "malformed") == [(0, s, 0) for s in range(4)]  # nothing of the bad ones


def test_records_in_flight_stay_bounded_while_the_store_is_stalled(tmp_path):
    """A records frame is one frame but many records: reading stops once max_inflight
    records are unanswered, not after max_inflight frames (nothing read is lost)."""
    db = tmp_path / "m.sqlite3"
    info = run_info("stalled", pp=2, steps=200)
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    app.state.live_config = LiveConfig(max_inflight=32)

    async def scenario(srv):
        live = srv.app.state.live
        ws, _ = await _open(srv, info, 0)
        before = live.stats.frames
        blocker = sqlite3.connect(db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # the writer cannot commit: nothing is answered
        for first in range(0, 160, 16):
            await ws.send(_batch(_rank_steps(info, 0, range(first, first + 16))))
        await asyncio.sleep(1.0)  # time for the server to read all it would
        read_while_stalled = live.stats.frames - before
        blocker.execute("ROLLBACK")
        blocker.close()
        replies = await _until_ack(ws, 159)
        await ws.close()
        return read_while_stalled, replies

    with ServerThread(app) as srv:
        read_while_stalled, replies = asyncio.run(scenario(srv))
    assert read_while_stalled <= 4  # 32 records in two frames, and one frame past the cap
    assert all(r["type"] == "ack" for r in replies)
    assert _rows(db, "stalled") == [(0, s, 0) for s in range(160)]


def _fast_batch(text):
    try:
        frame = protocol_fast.parse_ingest_frame(text)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return None
    return frame.records if isinstance(frame, protocol_fast.RecordsFrame) else None


def _oracle_batch(text):
    try:
        frame = parse_frame(text)
    except (ValidationError, ValueError, RecursionError):
        return None
    return frame.records if isinstance(frame, RecordsFrame) else None


def _batch_mutations():
    """Each of the single-frame mutations (test_fast_protocol) as the second record of a
    records frame, and the frame's own: empty, over the cap, not a list, extra keys."""
    good = BASE
    for text in _mutations():
        try:
            mutated = json.loads(text)["record"]
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        yield _batch([good, mutated])
    yield _batch([])
    yield _batch([good] * (MAX_BATCH_RECORDS + 1))
    yield _batch([good] * MAX_BATCH_RECORDS)
    yield json.dumps({"type": "records", "records": good})
    yield json.dumps({"type": "records", "records": None})
    yield json.dumps({"type": "records", "records": [good], "extra": 1})
    yield json.dumps({"type": "records", "record": good})
    yield json.dumps({"type": "record", "records": [good]})


def test_whatever_the_fast_decoder_accepts_in_a_batch_the_protocol_accepts_the_same():
    fast_only, both = [], 0
    for text in _batch_mutations():
        fast, oracle = _fast_batch(text), _oracle_batch(text)
        if fast is None:
            continue
        if oracle is None:
            fast_only.append(text[:200])
            continue
        both += 1
        assert [protocol_fast.record_json(r) for r in fast] == [
            r.model_dump_json(exclude_none=True) for r in oracle
        ]
    assert fast_only == []
    assert both > 50
