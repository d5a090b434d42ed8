"""A rank that ends with records the server never acked makes the run "incomplete" with the
exact count of rank-steps still to come, and ``meshscope upload`` (gpu_probe.upload, the
reporter's own protocol) sends them: complete, done, and a second upload sends nothing."""

import asyncio
import json
import sqlite3

import pytest
from support import (
    AUTH,
    TOKEN,
    ServerThread,
    get_json,
    hello,
    record_frame,
    records,
    run_info,
    wait_until,
)
from websockets.asyncio.client import connect

from app.core.inputs.protocol import HelloFrame
from app.live.config import LiveConfig
from app.main import create_app
from app.settings import Settings
from gpu_probe.upload import upload

pytestmark = pytest.mark.timeout(90)
STEPS, LIVE_STEPS = 6, 2  # the server hears steps 0-1 live; 2-5 wait in the spools


def _spools(out, info):
    """What the probe leaves behind: run.json and one JSONL spool per rank, every step."""
    out.mkdir()
    (out / "run.json").write_text(info.model_dump_json())
    for rank in range(info.world_size):
        lines = [json.dumps(records(info, step, t0=1000.0 + step)[rank]) for step in range(STEPS)]
        (out / f"rank-{rank:05d}.jsonl").write_text("".join(line + "\n" for line in lines))


async def _live_then_end(ws_base, info):
    """Each rank streams its first steps, says it ended, and leaves (the flush timed out)."""
    for rank in range(info.world_size):
        async with connect(ws_base + "/ws/ingest", additional_headers=AUTH) as ws:
            frame = HelloFrame(rank=rank, info=info, heartbeat_s=0.5).model_dump_json()
            await ws.send(frame)
            await ws.recv()
            for step in range(LIVE_STEPS):
                await ws.send(record_frame(records(info, step, t0=1000.0 + step)[rank]))
                await ws.recv()
            beat = {"type": "heartbeat", "run": info.run, "rank": rank, "step": STEPS - 1,
                    "sent_at": 1.0, "ended": True}  # fmt: skip
            await ws.send(json.dumps(beat))


def _rows(db) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM steps WHERE run = 'spooled'").fetchone()[0]


def test_an_ended_run_is_incomplete_until_upload_sends_the_rest(tmp_path):
    db = tmp_path / "l.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    app.state.live_config = LiveConfig(sweep_s=0.05)
    info = run_info("spooled", pp=2, steps=STEPS)
    _spools(tmp_path / "out", info)
    with ServerThread(app) as srv:
        asyncio.run(asyncio.wait_for(_live_then_end(srv.ws, info), 20))
        api = f"/api/runs/{info.run}"
        assert wait_until(lambda: get_json(srv.base, api)["status"] == "incomplete", 10)
        run = get_json(srv.base, api)
        missing = info.world_size * (STEPS - LIVE_STEPS)
        assert run["records"] == {
            "expected": info.world_size * STEPS,
            "received": info.world_size * LIVE_STEPS,
            "unreceived": missing,
        }
        assert {r["state"] for r in run["ranks"]} == {"ended"}  # not dead: they ended
        assert "ended with records unsent" in run["reason"]

        first = upload(tmp_path / "out", srv.ws + "/ws/ingest", TOKEN, timeout_s=30)
        assert [(r.sent, r.unsent, r.error) for r in first] == [(STEPS - LIVE_STEPS, 0, None)] * 2
        assert wait_until(lambda: get_json(srv.base, api)["status"] == "done", 10)
        run = get_json(srv.base, api)
        assert run["records"]["unreceived"] == 0
        assert [p["ranks"] for p in run["trend"]] == [info.world_size] * STEPS
        stored = _rows(db)

        again = upload(tmp_path / "out", srv.ws + "/ws/ingest", TOKEN, timeout_s=30)
        assert [(r.sent, r.unsent, r.error) for r in again] == [(0, 0, None)] * 2
        assert _rows(db) == stored == info.world_size * STEPS  # idempotent: nothing new


def test_a_hello_still_parses_without_the_new_fields():
    info = run_info("old", pp=2)
    frame = HelloFrame.model_validate_json(hello(info, 0))
    assert frame.heartbeat_s is None  # an older sender: the server keeps its 5 s rule
