"""Liveness through the server: a rank whose reporter vanishes fails the run, dated at its
last event, viewers are told, and a resumed attempt brings the run back."""

import asyncio
import json

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

from app.live.config import LiveConfig
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)


def test_a_vanished_rank_fails_the_run_and_a_resume_revives_it(tmp_path):
    app = create_app(Settings(db=tmp_path / "l.sqlite3", ingest_token=TOKEN))
    app.state.live_config = LiveConfig(heartbeat_s=0.2, sweep_s=0.05)  # stale after 0.6 s
    info = run_info("dies", pp=2, steps=10)
    with ServerThread(app) as srv:

        async def go():
            statuses = []
            async with connect(srv.ws + "/ws/runs/dies") as viewer:
                await viewer.recv()
                async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as a:
                    await a.send(hello(info, 0))
                    await a.recv()
                    async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as b:
                        await b.send(hello(info, 1))
                        await b.recv()
                        recs = records(info, 0, t0=500.0)
                        await a.send(record_frame(recs[0]))
                        await b.send(record_frame(recs[1]))
                        await b.recv()
                    # rank 1 is gone; rank 0 keeps beating
                    for _ in range(40):
                        await a.send(json.dumps({"type": "heartbeat", "run": "dies", "rank": 0,
                                                 "sent_at": 1.0}))  # fmt: skip
                        await asyncio.sleep(0.05)
                        while True:
                            try:
                                msg = await asyncio.wait_for(viewer.recv(), 0.01)
                            except TimeoutError:
                                break
                            for f in json.loads(msg):
                                statuses += [i for i in f.get("items", []) if i["type"] == "status"]
                        if any(s["status"] == "failed" for s in statuses):
                            break
            return statuses

        statuses = asyncio.run(asyncio.wait_for(go(), 30))
        failed = [s for s in statuses if s["status"] == "failed"]
        assert failed and failed[0]["ranks"]["1"] == "dead"
        assert failed[0]["failed_at"] == pytest.approx(500.0 + 0.157, abs=1e-3)
        assert wait_until(lambda: get_json(srv.base, "/api/runs/dies")["status"] == "failed", 5)

        async def resume():
            for rank in (0, 1):
                async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
                    await ws.send(hello(info, rank, attempt=1))
                    assert json.loads(await ws.recv())["step"] == 0  # resume point: (0, 0)
                    await ws.send(record_frame(records(info, 1, attempt=1)[rank]))
                    await ws.recv()

        asyncio.run(asyncio.wait_for(resume(), 10))
        run = get_json(srv.base, "/api/runs/dies")
        assert run["attempt"] == 1 and [p["step"] for p in run["trend"]] == [0, 1]
