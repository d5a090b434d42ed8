"""/api/trace and /api/flow are streamed: several body pieces, the same JSON as before.

The app is driven at the ASGI level so each ``http.response.body`` message is seen (the test
client joins them). "As before" is the one-piece answer the routes gave: ``JSONResponse`` of
``chrome_trace.build`` (of ``flow.flow_view``) for the same scenario.
"""

import json

import anyio
import pytest
from fastapi.responses import JSONResponse

from app.api import json_chunks
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.views import chrome_trace, flow
from app.main import create_app

SMALL = {"pp": 4, "microbatches": 8, "virtual_stages": 2, "schedule": "interleaved", "f_time": 1}
QUERY = "pp=4&microbatches=8&virtual_stages=2&schedule=interleaved&f_time=1"


def asgi_get(app, path: str, query: str) -> tuple[int, dict[str, str], list[bytes]]:
    """One GET through the ASGI app: status, headers and every body message's bytes."""
    sent: list[dict] = []

    async def receive():
        await anyio.sleep_forever()  # no request body; never a disconnect

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1",
        "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
        "query_string": query.encode(), "root_path": "", "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    anyio.run(app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body" and m["body"]]
    return start["status"], headers, bodies


@pytest.fixture
def app(settings, fidelity_board):
    app = create_app(settings)
    app.state.fidelity = fidelity_board
    return app


def test_the_trace_arrives_in_pieces_and_is_byte_for_byte_the_one_piece_json(app):
    status, headers, pieces = asgi_get(app, "/api/trace", QUERY)
    assert status == 200 and "content-length" not in headers  # streamed: no length up front
    assert "attachment" in headers["content-disposition"]
    trace = chrome_trace.build(evaluate(Scenario(**SMALL)))
    assert len(pieces) >= 3  # the opening, the events, the closing header keys
    assert b"".join(pieces) == JSONResponse(trace).body
    assert json.loads(b"".join(pieces)) == trace


@pytest.mark.parametrize("per_chunk", [1, 7, 1000])
def test_chunks_parse_to_build_whatever_the_chunk_size(per_chunk):
    view = evaluate(Scenario(**SMALL))
    whole = b"".join(chrome_trace.chunks(view, per_chunk))
    assert json.loads(whole) == chrome_trace.build(view)
    pieces = list(chrome_trace.chunks(view, per_chunk))
    events = len(chrome_trace.build(view)["traceEvents"])
    assert len(pieces) == 2 + -(-events // per_chunk)  # one piece per chunk of events


def test_the_flow_data_stream_in_pieces_and_match_the_one_piece_json(app, monkeypatch):
    monkeypatch.setattr(json_chunks, "PIECE_BYTES", 256)  # a small scenario still makes many pieces
    status, headers, pieces = asgi_get(app, "/api/flow", QUERY)
    assert status == 200 and len(pieces) > 3
    expected = flow.flow_view(json.loads(app.state.scenario_cache.entry(Scenario(**SMALL)).body))
    assert b"".join(pieces) == JSONResponse(expected).body


def test_json_parts_are_json_dumps_of_nested_values_with_long_lists():
    value = {"a": list(range(2500)), "b": {"c": [{"x": 1.5}] * 3, "d": "é<"}, "e": []}
    assert "".join(json_chunks.json_parts(value)) == json_chunks.dumps(value)


def test_a_short_list_of_long_lists_goes_in_parts_and_stays_byte_for_byte():
    # flow's inflight: one list per stage, each thousands of [t, held] steps long.
    value = {"inflight": [[[i * 0.5, i % 7] for i in range(2500)], [], [[0.0, 1]]] * 2}
    parts = list(json_chunks.json_parts(value))
    assert "".join(parts) == json_chunks.dumps(value)
    assert max(map(len, parts)) < len(json_chunks.dumps(value["inflight"][0])) // 2


def test_a_bad_scenario_is_still_a_422_before_any_byte(app):
    status, _, pieces = asgi_get(app, "/api/trace", "schedule=interleaved&pp=3")
    assert status == 422 and json.loads(b"".join(pieces))["detail"][0]["loc"][-1]
