"""The streaming trace reader (app/importers/trace_stream.py): the same events and fields
as json.load, whatever the read chunk cuts, and a clear refusal of what is not a trace."""

import gzip
import io
import json
from pathlib import Path

import pytest

from app.importers import trace_stream
from app.importers.trace_stream import NotATrace, events

RANK1 = Path(__file__).resolve().parents[1] / "fixtures/traces/gloo_dp2_pp2/rank1_trace.json.gz"


@pytest.mark.parametrize("chunk", [5, 4096])
def test_events_and_fields_match_json_load_at_any_chunk(monkeypatch, chunk):
    monkeypatch.setattr(trace_stream, "CHUNK", chunk)
    text = gzip.decompress(RANK1.read_bytes()).decode()
    header: dict = {}
    streamed = list(events(io.StringIO(text), header))
    doc = json.loads(text)
    assert streamed == doc["traceEvents"] and len(streamed) > 600
    assert header == {k: v for k, v in doc.items() if k != "traceEvents"}


def test_fields_after_the_events_are_in_the_header_once_the_events_are_read():
    text = '{"traceEvents": [{"ph": "X"}, 12.5e3], "distributedInfo": {"rank": 3}}'
    header: dict = {}
    stream = events(io.StringIO(text), header)
    assert next(stream) == {"ph": "X"} and header == {}
    assert list(stream) == [12500.0] and header == {"distributedInfo": {"rank": 3}}


@pytest.mark.parametrize(
    "text, why",
    [
        ("[1, 2]", "expected '{'"),
        ('{"a": 1}', "no traceEvents array"),
        ('{"traceEvents": [{"ph": "X"}, {"ph": ', "Expecting value"),
        ('{"traceEvents": [1 2]}', "expected ',' or ']'"),
        ('{"traceEvents": [] "x": 1}', "expected ',' or '}'"),
    ],
)
def test_what_is_not_a_trace_is_refused_saying_why(text, why):
    with pytest.raises(NotATrace, match=why):
        list(events(io.StringIO(text), {}))
