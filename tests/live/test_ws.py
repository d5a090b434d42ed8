"""The two websockets against a real server on loopback: the token is checked before the
handshake completes, viewers are read-only and Origin-checked, and the protocol's rules
(hello first, one rank per connection, one version) are enforced frame by frame."""

import asyncio
import json

import pytest
from support import (
    AUTH,
    TOKEN,
    ServerThread,
    get_json,
    hello,
    producers,
    record_frame,
    records,
    run_info,
)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    db = tmp_path_factory.mktemp("ws") / "live.sqlite3"
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as s:
        yield s


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


async def _refused(url, **kw) -> int:
    with pytest.raises(InvalidStatus) as err:
        async with connect(url, **kw):
            pass
    return err.value.response.status_code


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + "y" * len(TOKEN)},
     {"Authorization": f"Basic {TOKEN}"}, {"Authorization": TOKEN}],
    ids=["none", "short", "same-length", "basic", "bare"],
)  # fmt: skip
def test_a_missing_or_wrong_token_is_refused_before_accept(srv, headers):
    assert run(_refused(srv.ws + "/ws/ingest", additional_headers=headers)) == 403


def test_the_right_token_is_accepted_and_hello_answers_the_cursor(srv):
    async def go():
        async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
            await ws.send(hello(run_info("ws-ok", pp=1), 0))
            return json.loads(await ws.recv())

    assert run(go()) == {"type": "ack", "run": "ws-ok", "rank": 0, "attempt": 0, "step": None}


def test_a_foreign_origin_is_refused_and_our_own_is_not(srv):
    url = srv.ws + "/ws/runs/any"
    assert run(_refused(url, origin="http://evil.example")) == 403

    async def own():
        async with connect(url, origin=f"http://127.0.0.1:{srv.port}") as ws:
            return json.loads(await ws.recv())

    assert run(own()) == [{"type": "hello", "run": "any", "seq": 0}]


def test_a_viewer_that_sends_data_is_closed(srv):
    async def go():
        async with connect(srv.ws + "/ws/runs/any") as ws:
            await ws.recv()
            await ws.send("hello?")
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ws.recv()
            return closed.value.rcvd.code

    assert run(go()) == 1008


def test_a_departed_viewer_is_noticed(srv):
    hub = srv.app.state.live.hub

    async def go():
        async with connect(srv.ws + "/ws/runs/gone") as ws:
            await ws.recv()
            assert hub.viewers_of("gone") == 1
        for _ in range(100):
            if hub.viewers_of("gone") == 0:
                return True
            await asyncio.sleep(0.02)
        return False

    assert run(go())


async def _exchange(srv, frames, expect: int):
    async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
        for f in frames:
            await ws.send(f)
        return [json.loads(await ws.recv()) for _ in range(expect)]


def test_records_need_a_hello_and_must_be_this_connections_rank(srv):
    info = run_info("ws-rules", pp=2)
    recs = records(info, 0)
    before = _exchange(srv, [record_frame(recs[0])], 1)
    (err,) = run(before)
    assert err["type"] == "error" and "hello" in err["message"] and not err["fatal"]
    replies = run(_exchange(srv, [hello(info, 0), record_frame(recs[1])], 2))
    assert replies[1]["type"] == "error" and "connection of rank 0" in replies[1]["message"]
    assert get_json(srv.base, "/api/runs/ws-rules/steps")["records"] == []


def test_another_protocol_version_is_fatal(srv):
    frame = json.loads(hello(run_info("ws-v", pp=1), 0))
    frame["v"] = 2

    async def go():
        async with connect(srv.ws + "/ws/ingest", additional_headers=AUTH) as ws:
            await ws.send(json.dumps(frame))
            reply = json.loads(await ws.recv())
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            return reply, closed.value.rcvd.code

    reply, code = run(go())
    assert reply["code"] == "unsupported_version" and reply["fatal"] and code == 1008


def test_a_run_name_reused_with_another_mesh_is_refused(srv):
    run(_exchange(srv, [hello(run_info("ws-dup", pp=2), 0)], 1))
    (reply,) = run(_exchange(srv, [hello(run_info("ws-dup", pp=4), 0)], 1))
    assert reply["type"] == "error" and reply["fatal"] and "another config" in reply["message"]


def test_a_viewer_sees_records_and_completed_steps(srv):
    info = run_info("ws-view", dp=1, pp=2, steps=3)

    async def go():
        async with connect(srv.ws + "/ws/runs/ws-view") as viewer:
            await viewer.recv()
            async with producers(srv.ws, info, 2) as (a, b):
                for step in range(3):
                    recs = records(info, step)
                    for rank, ws in enumerate((a, b)):
                        await ws.send(record_frame(recs[rank]))
                items = []
                while sum(i["type"] == "step" for i in items) < 3:
                    for frame in json.loads(await viewer.recv()):
                        items += frame.get("items", [])
                return items

    items = run(go())
    assert sorted((i["step"], i["rank"]) for i in items if i["type"] == "record") == [
        (s, r) for s in range(3) for r in range(2)
    ]
    assert [i["step"] for i in items if i["type"] == "step"] == [0, 1, 2]
    page = get_json(srv.base, "/api/runs/ws-view")
    assert [p["ranks"] for p in page["trend"]] == [2, 2, 2]
    text = get_json(srv.base, "/api/runs/ws-view/analysis?step=2")
    assert text["complete"] and text["step"] == 2
