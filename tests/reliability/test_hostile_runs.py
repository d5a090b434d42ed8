"""Issue 26 items 4, 5 and 13: a hello declares sizes the server must be able to serve, and a
frame the JSON parser cannot hold is a strike like any other.

* A world whose every factor is in range but whose product is not (65,536 x 65,536 took the
  server to 24 GB), or a schedule bigger than the core simulates (pp=8 with 200,000
  microbatches made one analysis 19.8 s and 2.4 GB), is refused at the hello with a fatal
  error frame naming the product, before anything is allocated for it.
* A record carrying more events than the run's share of a step keeps its compute; what goes
  is counted in ``dropped_events``.
* ``'[' * 100000`` after a hello was a RecursionError and a 1011 close; it is one strike.
"""

import asyncio
import json
import resource
import time

import pytest
from pydantic import ValidationError
from support import AUTH, TOKEN, ServerThread, get_json, hello, record_frame, records, run_info
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from app.core.inputs.protocol import MAX_EVENTS, MAX_STEP_EVENTS, RunInfo, oversize, parse_frame
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)
DEEP = "[" * 100_000 + "]" * 100_000


def _hello_with(**info_changes) -> str:
    """A hello whose info has these fields changed, never validated here (the server must)."""
    frame = json.loads(hello(run_info("big", pp=2, steps=10), 0))
    frame["info"] |= info_changes
    return json.dumps(frame)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


HOSTILE = [  # (info changes, the product the refusal names)
    ({"dp": 65_536, "tp": 2, "pp": 1}, "dp*tp*pp"),  # 131,072 ranks
    ({"pp": 8, "microbatches": 200_000}, "pp*microbatches*chunks*3"),
    ({"dp": 1024, "pp": 2, "steps": 1_000_000}, "dp*tp*pp*steps"),
    ({"dp": 256, "pp": 4, "microbatches": 64}, "dp*tp*pp*microbatches*chunks"),
]


def test_a_hello_bounds_its_runs_products_and_names_them():
    for changes, named in [({"dp": 65_536, "tp": 65_536, "pp": 1}, "dp*tp*pp")] + HOSTILE:
        with pytest.raises(ValidationError) as exc:
            parse_frame(_hello_with(**changes))
        assert named + " " in str(exc.value), changes
        # A run stored before the bound still loads (a restart must not fail on it).
        stored = run_info("big", pp=2).model_dump() | changes
        assert oversize(RunInfo.model_validate(stored)).startswith("info: " + named + " ")
    # Big runs the views serve still pass: 16,384 ranks (bench_pages.py's largest world) with
    # one microbatch, and pp=8 with the most microbatches one step's page can draw.
    for ok in (run_info("ok", dp=256, tp=8, pp=8, m=1), run_info("ok", pp=8, m=3750)):
        assert parse_frame(hello(ok, 0)).info == ok and oversize(ok) is None
    assert run_info("ok", pp=8, m=3750).events_cap() == MAX_STEP_EVENTS // 8


def test_an_oversized_hello_is_refused_fast_and_the_server_stays_healthy(tmp_path):
    settings = Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN)
    with ServerThread(create_app(settings)) as srv:

        async def attack() -> list[tuple[dict, int, float]]:
            out = []
            for changes, _ in HOSTILE:
                async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
                    t = time.monotonic()
                    await ws.send(_hello_with(**changes))
                    reply = json.loads(await ws.recv())
                    with pytest.raises(ConnectionClosed) as closed:
                        await ws.recv()
                    out.append((reply, closed.value.rcvd.code, time.monotonic() - t))
            return out

        before = _peak_rss_mb()
        results = asyncio.run(asyncio.wait_for(attack(), 30))
        for (changes, named), (reply, code, took) in zip(HOSTILE, results, strict=True):
            assert reply["type"] == "error" and reply["fatal"], changes
            assert reply["code"] == "bad_frame" and named in reply["message"], reply
            assert code == 1008 and took < 2.0, (changes, code, took)
        assert _peak_rss_mb() - before < 100  # nothing was laid out for those worlds
        assert get_json(srv.base, "/healthz") == {"status": "ok"}
        assert get_json(srv.base, "/api/runs")["runs"] == []  # none of them was stored


def test_a_record_over_its_share_of_a_step_keeps_its_compute(tmp_path):
    info = run_info("wide", dp=2, tp=2, pp=2, steps=4, m=4)  # world 8: 7,500 events a record
    cap = info.events_cap()
    assert cap < MAX_EVENTS
    rec = records(info, 0)[0]
    pulse = {"kind": "tp", "microbatch": 0, "chunk": 0, "start": 0.0, "end": 0.001}
    extra = cap + 100 - len(rec["events"])
    rec["events"] = rec["events"] + [pulse] * extra
    compute = sum(e["kind"] in ("F", "B", "W") for e in rec["events"])
    with ServerThread(create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN))) as srv:

        async def send() -> dict:
            async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
                await ws.send(hello(info, 0))
                await ws.recv()
                await ws.send(record_frame(rec))
                return json.loads(await ws.recv())

        assert asyncio.run(asyncio.wait_for(send(), 20))["type"] == "ack"
        stored = get_json(srv.base, "/api/runs/wide/steps")["records"][0]
        assert len(stored["events"]) == cap and stored["dropped_events"] == 100
        assert sum(e["kind"] in ("F", "B", "W") for e in stored["events"]) == compute


def test_a_deeply_nested_frame_is_a_strike_and_the_run_goes_on(tmp_path):
    info = run_info("deep", pp=1, steps=3)
    nested = json.dumps({"type": "record", "record": 0})[:-2] + DEEP + "}"
    with ServerThread(create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN))) as srv:

        async def session() -> list[dict]:
            async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
                await ws.send(hello(info, 0))
                replies = [json.loads(await ws.recv())]
                for bad in (DEEP, nested, '{"v": 2, "x": ' + DEEP + "}"):
                    await ws.send(bad)
                    replies.append(json.loads(await ws.recv()))
                for step in range(3):
                    await ws.send(record_frame(records(info, step)[0]))
                    replies.append(json.loads(await ws.recv()))
                return replies

        replies = asyncio.run(asyncio.wait_for(session(), 20))
        assert [r["type"] for r in replies] == ["ack"] + ["error"] * 3 + ["ack"] * 3
        assert all(r["code"] == "bad_frame" and not r["fatal"] for r in replies[1:4])
        assert [r["step"] for r in replies[4:]] == [0, 1, 2]
        stored = get_json(srv.base, "/api/runs/deep/steps")["records"]
        assert [r["step"] for r in stored] == [0, 1, 2]
        assert get_json(srv.base, "/healthz") == {"status": "ok"}
