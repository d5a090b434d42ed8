"""The fast record decoder (app.core.inputs.protocol_fast, msgspec) against the protocol's
own (protocol.parse_frame, pydantic strict) as the oracle (issue 26 item 11): whatever the
fast one accepts, the oracle accepts with the same values and the same stored JSON; every
probe-shaped record takes the fast path; and a frame only the oracle takes is still stored."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import msgspec
import pytest
from pydantic import ValidationError
from support import TOKEN, ServerThread, producers, record_frame, records, run_info

from app.core.inputs import protocol_fast
from app.core.inputs.protocol import AckFrame, parse_frame
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
INFO = run_info("fast", dp=2, tp=2, pp=2, steps=20)
BASE = records(INFO, 3)[1]  # a pp stage with sends, receives and TP pulses
HOSTILE = ["3", True, False, 3.0, 2.5, -1, 0, 2**63, 2**70, -(2**63), 1e400, -1e400, None,
           "", "x" * 3000, [], {}, {"extra": 1}, 86_401.0, 65_536, 1e11 + 1]  # fmt: skip


def _fast(text: str):
    try:
        return protocol_fast.parse_record_frame(text)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return None


def _oracle(text: str):
    try:
        return parse_frame(text).record
    except (ValidationError, ValueError, RecursionError, AttributeError):
        return None


def _mutations():
    """Every field of the record, of its coord and of an event set to each hostile value,
    and removed; extra fields; the validators' cases; raw texts JSON allows but the
    protocol does not."""
    rec = BASE
    for key in [*rec, "mem_allocated", "mem_reserved", "stopped", "dropped_events", "v"]:
        for value in HOSTILE:
            yield record_frame(rec | {key: value})
        yield record_frame({k: v for k, v in rec.items() if k != key})
    for key in ("dp", "pp", "tp", "cp", "ep"):
        for value in [*HOSTILE, 1, 7]:
            yield record_frame(rec | {"coord": rec["coord"] | {key: value}})
    event = rec["events"][0]
    for key in [*event, "peer", "cpu", "microbatch", "chunk"]:
        for value in [*HOSTILE, "F", "pp_recv", "cp", "ep", "nope"]:
            yield record_frame(rec | {"events": [event | {key: value}, *rec["events"][1:]]})
    yield record_frame(rec | {"events": [event | {"start": 0.5, "end": 0.4}]})
    yield record_frame(rec | {"mem_allocated": 10, "mem_reserved": 9})
    yield record_frame(rec | {"mem_allocated": 10, "mem_reserved": 10, "stopped": "why"})
    yield record_frame(rec | {"run": "fast\n"})
    yield record_frame(rec | {"run": "a" * 65})
    yield record_frame(rec | {"stopped": "\ud800 lone surrogate"})
    yield record_frame(rec | {"events": [event] * 20_001})
    yield json.dumps({"type": "record", "record": rec, "extra": 1})
    yield json.dumps({"type": "hello", "record": rec})
    yield json.dumps({"record": rec})
    text = record_frame(rec)
    yield text.replace('"step": 3', '"step": 3, "step": "x"')
    yield text.replace('"step": 3', '"step": "x", "step": 3')  # the oracle takes the last
    yield text.replace('"loss": ', '"loss": NaN, "x": ') if "loss" in rec else text + " "
    yield text[:-1] + ', "t0": Infinity}'
    yield "[" * 100_000 + "]" * 100_000
    yield text.encode()
    yield text[:-10]


def test_whatever_the_fast_decoder_accepts_the_protocol_accepts_the_same():
    fast_only, both = [], 0
    for text in _mutations():
        fast, oracle = _fast(text), _oracle(text)
        if fast is None:
            continue
        if oracle is None:
            fast_only.append(text[:200])
            continue
        both += 1
        assert protocol_fast.record_json(fast) == oracle.model_dump_json(exclude_none=True)
    assert fast_only == []
    assert both > 50  # the mutations reached accepted frames too, not only refusals


@pytest.mark.parametrize("mesh", [dict(dp=2, tp=2, pp=2), dict(dp=1, tp=4, pp=4, m=8)])
def test_every_probe_shaped_record_takes_the_fast_path_and_stores_the_same_json(mesh):
    info = run_info("fast-mesh", steps=20, **mesh)
    for step in (0, 7):
        for rec in records(info, step, attempt=1):
            for extra in ({}, {"mem_allocated": 5, "mem_reserved": 7, "loss": -0.5},
                          {"stopped": "NCCL timeout", "dropped_events": 12}):  # fmt: skip
                text = record_frame(rec | extra)
                fast = _fast(text)
                assert fast is not None
                oracle = parse_frame(text).record
                assert protocol_fast.record_json(fast) == oracle.model_dump_json(exclude_none=True)


def test_fewer_events_keeps_the_rest_of_the_record():
    fast = protocol_fast.parse_record_frame(record_frame(BASE))
    oracle = parse_frame(record_frame(BASE)).record
    cut = [protocol_fast.with_events(r, r.events[:2], 9) for r in (fast, oracle)]
    assert protocol_fast.record_json(cut[0]) == protocol_fast.record_json(cut[1])
    assert json.loads(protocol_fast.record_json(cut[0]))["dropped_events"] == 9


def test_a_frame_only_the_protocol_takes_is_still_stored(tmp_path):
    """A duplicate key whose first value is wrong: pydantic keeps the last, msgspec checks
    both, so the record reaches the store through parse_frame, as a pydantic model."""
    info = run_info("fallback", pp=2, steps=5)
    rec = records(info, 0)[0]
    text = record_frame(rec).replace('"step": 0', '"step": "x", "step": 0')
    assert _fast(text) is None and _oracle(text) is not None
    settings = Settings(db=tmp_path / "f.sqlite3", ingest_token=TOKEN)

    async def go(srv):
        async with producers(srv.ws, info, 1) as (ws,):
            await ws.send(text)
            return await asyncio.wait_for(ws.recv(), 10)

    with ServerThread(create_app(settings)) as srv:
        ack = asyncio.run(go(srv))
    assert ack == AckFrame(run="fallback", rank=0, attempt=0, step=0).model_dump_json()
    with sqlite3.connect(tmp_path / "f.sqlite3") as db:
        (stored,) = db.execute("SELECT record FROM steps WHERE run = 'fallback'").fetchone()
    assert json.loads(stored) == json.loads(parse_frame(text).record.model_dump_json(
        exclude_none=True))  # fmt: skip


def test_a_stored_record_reads_back_as_it_was_stored():
    oracle = parse_frame(record_frame(BASE | {"mem_allocated": 5, "mem_reserved": 7})).record
    text = oracle.model_dump_json(exclude_none=True)
    back = protocol_fast.parse_stored_record(text)
    assert isinstance(back, protocol_fast.ProbeRecord)
    assert protocol_fast.record_json(back) == text
    odd = text.replace('"step":3', '"step":"x","step":3')  # only pydantic takes it
    assert protocol_fast.record_json(protocol_fast.parse_stored_record(odd)) == text
    with pytest.raises(ValidationError):
        protocol_fast.parse_stored_record(text.replace('"step":3', '"step":-3'))
