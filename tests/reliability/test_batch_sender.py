"""The reporter's side of records frames (issue 26 item 11): a spool replayed after an outage
(what ``meshscope upload`` does too) goes as a few records frames to a server that offers
them, every record stored once; to an older server, which offers none, one record per
frame, and nothing lost."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading

import pytest
from support import TOKEN, ServerThread, free_port, records, run_info
from websockets.asyncio.server import serve

from app.core.inputs.protocol import MAX_BATCH_RECORDS, HelloFrame
from app.main import create_app
from app.settings import Settings
from gpu_probe.batching import frames, offered_batch
from gpu_probe.reporter import Sender, Spool

pytestmark = pytest.mark.timeout(90)
STEPS = 40


def _spool(tmp_path, info, rank: int) -> Spool:
    spool = Spool(tmp_path / f"rank-{rank:05d}.jsonl")
    for step in range(STEPS):
        spool.append(json.dumps(records(info, step, t0=1.0e9 + step)[rank]))
    spool.close()
    return spool


def _flush(spool: Spool, url: str, info, rank: int) -> Sender:
    """The spool sent as an upload sends it (gpu_probe.upload._sender): all of it, then stop."""
    sender = Sender(spool, url, TOKEN, HelloFrame(rank=rank, info=info), heartbeat_s=None)
    sender.last_published = (0, STEPS - 1)
    sender.stopping.set()
    sender.start()
    sender.join(60)
    return sender


def test_frames_pack_by_count_and_bytes():
    lines = ['{"a":1}', '{"a":22}', '{"a":333}', "{}"]
    assert frames(lines, 1) == ['{"type":"record","record":' + line + "}" for line in lines]
    two = frames(lines, 2)
    assert [json.loads(f)["records"] for f in two] == [[{"a": 1}, {"a": 22}], [{"a": 333}, {}]]
    by_bytes = frames(lines, 100, budget=18)  # 8 + 9 bytes fit, a third would not
    assert [json.loads(f)["type"] for f in by_bytes] == ["records", "records"]
    assert offered_batch({}) == 1  # an older server: one record per frame
    assert offered_batch({"x-meshscope-batch": "64"}) == 64
    assert offered_batch({"x-meshscope-batch": "100000"}) == MAX_BATCH_RECORDS
    assert offered_batch({"x-meshscope-batch": "many"}) == 1


def test_a_replayed_spool_goes_in_records_frames_and_is_stored_once(tmp_path):
    db = tmp_path / "m.sqlite3"
    info = run_info("replayed", pp=2, steps=STEPS)
    spool = _spool(tmp_path, info, 1)
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as srv:
        stats = srv.app.state.live.stats
        sender = _flush(spool, srv.ws + "/ws/ingest", info, 1)
        frames_seen = stats.frames
        again = _flush(spool, srv.ws + "/ws/ingest", info, 1)  # resumes: nothing to send
    assert sender.done() and again.done() and sender.error is None
    assert frames_seen <= 3  # the hello and one records frame, not one frame per record
    assert stats.records == STEPS and stats.invalid == 0
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT step FROM steps WHERE rank = 1 ORDER BY step").fetchall()
    assert rows == [(s,) for s in range(STEPS)]


class OldServer:
    """Protocol v1 before records frames: no batch header; a record frame is acked, any
    other frame type is a strike (an error frame), as that server's parse_frame did."""

    def __init__(self) -> None:
        self.port, self.types, self.stored = free_port(), [], set()
        self._ready = threading.Event()
        self._stop: asyncio.Future | None = None

    async def _conn(self, ws) -> None:
        async for text in ws:
            frame = json.loads(text)
            self.types.append(frame["type"])
            if frame["type"] == "hello":
                ack = {"type": "ack", "run": frame["info"]["run"], "rank": frame["rank"]}
                await ws.send(json.dumps(ack | {"attempt": 0, "step": None}))
            elif frame["type"] == "record":
                rec = frame["record"]
                self.stored.add(rec["step"])
                ack = {"type": "ack", "run": rec["run"], "rank": rec["rank"]}
                await ws.send(json.dumps(ack | {"attempt": rec["attempt"], "step": rec["step"]}))
            elif frame["type"] != "heartbeat":
                error = {"type": "error", "code": "bad_frame", "message": "unknown type"}
                await ws.send(json.dumps(error | {"fatal": False}))

    async def _main(self) -> None:
        self._stop = asyncio.get_running_loop().create_future()
        async with serve(self._conn, "127.0.0.1", self.port):
            self._ready.set()
            await self._stop

    def __enter__(self) -> OldServer:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        loop = self._stop.get_loop()
        loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)


def test_an_older_server_gets_one_record_per_frame(tmp_path):
    info = run_info("older", pp=2, steps=STEPS)
    spool = _spool(tmp_path, info, 0)
    with OldServer() as old:
        sender = _flush(spool, f"ws://127.0.0.1:{old.port}/ws/ingest", info, 0)
    assert sender.done() and sender.error is None
    assert "records" not in old.types and old.types.count("record") == STEPS
    assert old.stored == set(range(STEPS))
