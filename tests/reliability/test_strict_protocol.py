"""The wire protocol is strict and bounded (issue 13, items 2 and 3): numbers are JSON
numbers, booleans are booleans, integers never exceed what SQLite stores. Malformed frames
are refused and not stored; the connection and the run go on."""

import asyncio
import json
import sqlite3

import pytest
from pydantic import ValidationError
from support import TOKEN, ServerThread, producers, record_frame, records, run_info

from app.core.inputs import protocol
from app.core.inputs.collective_profile import CollectiveProfile
from app.core.inputs.protocol import INT64_MAX, parse_frame
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)
INFO = run_info("strict", pp=2, steps=20)


def _record(**changes) -> dict:
    return records(INFO, 0)[0] | changes


def _event(**changes) -> dict:
    return {"kind": "F", "microbatch": 0, "chunk": 0, "start": 0.0, "end": 0.01} | changes


LAX = [  # (what, record changes): each would be coerced by pydantic's lax mode
    ("step as a string", {"step": "3"}),
    ("rank as a string", {"rank": "0"}),
    ("t0 as a string", {"t0": "1700000000.0"}),
    ("mem as a string", {"mem": "1024"}),
    ("loss as a string", {"loss": "2.5"}),
    ("attempt as a string", {"attempt": "0"}),
    ("step as a boolean", {"step": True}),
    ("rank as a boolean", {"rank": False}),
    ("node as a boolean", {"node": False}),
    ("loss as a boolean", {"loss": True}),
    ("t0 as a boolean", {"t0": True}),
    ("step as a float", {"step": 3.0}),
    ("mem as a float", {"mem": 1024.0}),
    ("version as a boolean", {"v": True}),
    ("version as a float", {"v": 1.0}),
    ("coord as booleans", {"coord": {"dp": False, "pp": False, "tp": False}}),
    ("event start as a string", {"events": [_event(start="0")]}),
    ("event microbatch as a boolean", {"events": [_event(microbatch=True)]}),
    ("event cpu as a boolean", {"events": [_event(cpu=False)]}),
    ("mem beyond SQLite", {"mem": 2**63}),
    ("mem beyond any machine", {"mem": 2**60}),
    ("dropped_events beyond SQLite", {"dropped_events": 2**63}),
]


@pytest.mark.parametrize("what,changes", LAX, ids=[w for w, _ in LAX])
def test_a_record_with_a_coercible_or_unbounded_value_is_refused(what, changes):
    with pytest.raises(ValidationError) as exc:
        parse_frame(record_frame(_record(**changes)))
    field = next(iter(changes))
    assert any(field in ".".join(map(str, e["loc"])) for e in exc.value.errors()), what


def test_the_other_frames_are_strict_too():
    hello = json.loads(
        json.dumps({"type": "hello", "rank": 0, "info": INFO.model_dump(mode="json")})
    )
    for change in ({"rank": True}, {"attempt": "1"}, {"v": True}):
        with pytest.raises(ValidationError):
            parse_frame(json.dumps(hello | change))
    for change in ({"dp": "1"}, {"steps": True}, {"pp": 2.0}):
        with pytest.raises(ValidationError):
            parse_frame(json.dumps(hello | {"info": hello["info"] | change}))
    beat = {"type": "heartbeat", "run": "strict", "rank": 0, "sent_at": 1.0}
    for change in ({"sent_at": "1.0"}, {"step": True}):
        with pytest.raises(ValidationError):
            parse_frame(json.dumps(beat | change))
    err = {"type": "error", "code": "bad_frame", "message": "m"}
    with pytest.raises(ValidationError):
        parse_frame(json.dumps(err | {"fatal": 1}))  # a boolean is a boolean
    link = {"bytes": 8, "latency_s": 1e-6, "algbw_gbps": 1.0, "busbw_gbps": 1.0}
    axis = {"axis": "dp", "op": "all_reduce", "group_size": 2, "crosses_node": 0, "points": []}
    prof = {"run": "r", "device": "cpu", "backend": "gloo", "world_size": 2}
    with pytest.raises(ValidationError):
        CollectiveProfile.model_validate_json(json.dumps(prof | {"axes": [axis]}))
    axis["crosses_node"], axis["points"] = False, [link | {"bytes": "8"}]
    with pytest.raises(ValidationError):
        CollectiveProfile.model_validate_json(json.dumps(prof | {"axes": [axis]}))


def test_json_numbers_still_pass_an_int_for_a_float_included():
    frame = parse_frame(record_frame(_record(t0=1_700_000_000, events=[_event(start=0)])))
    assert frame.record.t0 == 1.7e9 and frame.record.events[0].start == 0.0
    assert frame.record.mem == records(INFO, 0)[0]["mem"]
    assert parse_frame(record_frame(_record(mem=protocol.MAX_MEM_BYTES))).record.mem


def _integer_schemas(node):
    if isinstance(node, dict):
        if node.get("type") == "integer":
            yield node
        for value in node.values():
            yield from _integer_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _integer_schemas(value)


@pytest.mark.parametrize(
    "model",
    [
        protocol.HelloFrame,
        protocol.RecordFrame,
        protocol.AckFrame,
        protocol.HeartbeatFrame,
        protocol.ErrorFrame,
        CollectiveProfile,
    ],  # fmt: skip
)
def test_every_integer_in_the_protocol_fits_a_sqlite_integer(model):
    ints = list(_integer_schemas(model.model_json_schema()))
    for schema in ints:
        top = schema.get("maximum", schema.get("exclusiveMaximum", schema.get("const")))
        assert top is not None and top <= INT64_MAX, (model.__name__, schema)
        low = schema.get("minimum", schema.get("exclusiveMinimum", schema.get("const")))
        assert low is not None and low >= -INT64_MAX - 1, (model.__name__, schema)


async def _stream_with_malformed(srv) -> list[dict]:
    """Per step: one good record, then one malformed one (fewer than max_strikes per
    connection), each answered before the next is sent."""
    replies = []
    async with producers(srv.ws, INFO, 1) as (ws,):
        for step, (what, changes) in enumerate(LAX[:9]):
            good = records(INFO, step)[0]
            await ws.send(record_frame(good))
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
            await ws.send(record_frame(good | changes | {"step": step + 10} | changes))
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 20)) | {"what": what})
    return replies


def test_malformed_frames_are_refused_and_the_connection_and_run_survive(tmp_path):
    db = tmp_path / "m.sqlite3"
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as srv:
        replies = asyncio.run(asyncio.wait_for(_stream_with_malformed(srv), 40))
        assert srv.app.state.live.stats.invalid == 9
    acks, refusals = replies[0::2], replies[1::2]
    assert [(a["type"], a["step"]) for a in acks] == [("ack", s) for s in range(9)]
    assert all(r["type"] == "error" and not r["fatal"] for r in refusals), refusals
    assert all(r["code"] == "bad_frame" for r in refusals)
    with sqlite3.connect(db) as conn:
        steps = [s for (s,) in conn.execute("SELECT step FROM steps ORDER BY step")]
    assert steps == list(range(9))  # only the good ones
