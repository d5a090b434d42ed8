"""1,000+ generated bad frames against a live server while a healthy producer streams:
every bad frame is answered (error frame) or ends its connection (1008/1009), none is
stored, the server stays up, and the healthy producer loses nothing."""

import asyncio
import json
import random
import sqlite3

import pytest
from support import (
    AUTH,
    TOKEN,
    ServerThread,
    all_steps,
    get_json,
    hello,
    producers,
    record_frame,
    records,
    run_info,
)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from app.core.inputs.protocol import MAX_FRAME_BYTES
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
HEALTHY_STEPS = 60


def bad_frames(seed: int = 7) -> list[tuple[str, str | bytes]]:
    """(category, frame): every way a frame can be wrong that we can think of, mutated."""
    rnd = random.Random(seed)
    info = run_info("bad-run", pp=2, steps=100)
    good = records(info, 0)[0]
    out: list[tuple[str, str | bytes]] = []

    def mutated(**changes):
        rec = json.loads(json.dumps(good)) | changes
        return json.dumps({"type": "record", "record": rec}, allow_nan=True)

    for _ in range(250):
        text = record_frame(good)
        out.append(("bad json", text[: rnd.randrange(1, len(text) - 1)]))  # truncated
    for junk in ["", "{", "[]", "null", "1", '"record"', "{}", '{"type": "nope"}', "\x00" * 9]:
        out += [("bad json", junk)] * 10
    for _ in range(150):
        field, value = rnd.choice([
            ("step", "three"), ("rank", 1.5), ("coord", [0, 0, 0]), ("events", {"kind": "F"}),
            ("t0", "now"), ("attempt", None), ("mem", "big"), ("node", -1), ("run", 5),
            ("events", [{"kind": "Z", "start": 0, "end": 1}]), ("extra", 1),
            ("events", [{"kind": "F", "start": 2, "end": 1}]),
        ])  # fmt: skip
        out.append(("wrong types", mutated(**{field: value})))
    for _ in range(150):
        field = rnd.choice(["t0", "loss", "NaN-event", "inf-event"])
        if field.endswith("event"):
            v = float("nan") if field.startswith("NaN") else float("inf")
            out.append(("nan", mutated(events=[{"kind": "F", "start": 0, "end": v}])))
        else:
            out.append(("nan", mutated(**{field: rnd.choice([float("nan"), float("inf")])})))
    for _ in range(150):
        out.append(("negative step", mutated(step=-rnd.randrange(1, 10**6))))
    for _ in range(150):
        out.append(("binary", rnd.randbytes(rnd.randrange(1, 300))))
    for _ in range(100):  # valid records, but not this connection's rank, or wrong layout
        out.append(("wrong rank", mutated(rank=1)))
    out += [("oversize", "x" * (MAX_FRAME_BYTES + 1))] * 3
    rnd.shuffle(out)
    return out


async def _attack(srv, frames) -> dict:
    """Send every bad frame, one reply each; after a fatal reply (10 strikes) the server
    must close with 1008, and we reconnect for the rest."""
    info = run_info("bad-run", pp=2, steps=100)
    tally = {"errors": 0, "acks": 0, "closes": 0}
    queue = list(frames)
    while queue:
        async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH,
                           max_size=None) as ws:  # fmt: skip
            await ws.send(hello(info, 0))
            assert json.loads(await ws.recv())["type"] == "ack"
            while queue:
                _, frame = queue.pop()
                await ws.send(frame)
                reply = json.loads(await ws.recv())
                tally["acks" if reply["type"] == "ack" else "errors"] += 1
                if reply.get("fatal"):
                    with pytest.raises(ConnectionClosed) as closed:
                        await ws.recv()
                    assert closed.value.rcvd.code == 1008
                    tally["closes"] += 1
                    break
    return tally


async def _healthy(srv) -> list[dict]:
    info = run_info("good-run", pp=2, steps=HEALTHY_STEPS)
    async with producers(srv.ws, info, 2) as (a, b):
        acks = [[], []]
        for step in range(HEALTHY_STEPS):
            recs = records(info, step)
            for rank, ws in enumerate((a, b)):
                await ws.send(record_frame(recs[rank]))
            await asyncio.sleep(0.02)
        for rank, ws in enumerate((a, b)):
            while not acks[rank] or acks[rank][-1]["step"] != HEALTHY_STEPS - 1:
                acks[rank].append(json.loads(await ws.recv()))
        return acks


def test_bad_frames_are_refused_and_a_healthy_producer_loses_nothing(tmp_path):
    db = tmp_path / "m.sqlite3"
    frames = bad_frames()
    assert len(frames) >= 1000
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as srv:

        async def both():
            return await asyncio.gather(_attack(srv, frames), _healthy(srv))

        tally, acks = asyncio.run(asyncio.wait_for(both(), 100))
        assert tally["acks"] == 0
        assert tally["errors"] == len(frames)  # one error frame per bad frame
        assert tally["closes"] == len(frames) // 10  # the 10th strike closes (1008)
        assert get_json(srv.base, "/healthz") == {"status": "ok"}
        good = all_steps(srv.base, "good-run")
        assert sorted((r["rank"], r["step"]) for r in good) == [
            (rank, step) for rank in range(2) for step in range(HEALTHY_STEPS)
        ]
        assert all(a[-1]["step"] == HEALTHY_STEPS - 1 for a in acks)
        assert get_json(srv.base, "/api/runs/bad-run")["trend"] == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM steps WHERE run = 'bad-run'").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM steps").fetchone() == (2 * HEALTHY_STEPS,)
