"""The heavy jobs a worker process runs (app/api/pool.py): each the same work a route did on
the server's threads, from picklable inputs, its answer the same bytes the route sent.

A job that returns an iterator of bytes is streamed back piece by piece; its errors before
the first piece (ScenarioError, CompareError) reach the route before any response starts.
The accuracy board's rows are passed in (``rows``): they are the app's, computed once, and
a worker keeps no state of its own between jobs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import TypeAdapter

from app.api import page_head
from app.api.compare_stream import lines
from app.api.json_chunks import json_pieces
from app.core.evaluate import compare, evaluate
from app.core.evaluate.one_scenario import Registry
from app.core.fidelity import bands
from app.core.fidelity.board import Row
from app.core.inputs.protocol import RunInfo
from app.core.inputs.protocol_fast import parse_stored_record
from app.core.inputs.scenario import Scenario
from app.core.views import chrome_trace, flow
from app.live import analysis


def route_json(value: Any, annotation: Any = Any) -> Iterator[bytes]:
    """What FastAPI sends for a route returning ``value`` with this return annotation and no
    response class: the value validated as the annotation, then pydantic's dump_json
    (fastapi/routing.py, serialize_response; its floats are not json.dumps's: 6.9e-05 is
    0.000069)."""
    adapter = TypeAdapter(annotation)
    yield adapter.dump_json(adapter.validate_python(value), by_alias=True)


class RowsBoard:
    """The accuracy board as routes use it (app/api/fidelity.py: FidelityBoard), from its
    rows: ``band`` is FidelityBoard.band."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self._rows = list(rows)

    def rows(self) -> list[Row]:
        return self._rows

    def band(self, scenario: Scenario, fits: bool = True) -> dict[str, Any]:
        return bands.band_for(self._rows, scenario, fits)


def scenario_json(scenario: Scenario, hardware: Registry, rows: Sequence[Row]) -> Iterator[bytes]:
    """/api/scenario's body: evaluate with the error band added (fidelity.banded), encoded
    as ScenarioCache.render does; for a big one, a newline and its page head after it
    (app/api/page_head.py)."""
    view = evaluate(scenario, hardware)
    if "step_time_s" in view:
        view["error_band"] = bands.band_for(rows, scenario, view["memory"]["fits"])
    yield from page_head.pieces_with_head(view)


def compare_model(req: compare.Request, hardware: Registry, rows: Sequence[Row]) -> dict:
    """The comparison with its members' error bands (compare._banded), for the /compare page:
    sent back pickled, so its tuples stay tuples (the page's links are urlencoded from them);
    a compare's columns are summaries, not timelines, so it is small."""
    result = compare.compare(req, hardware)
    for m in result["members"]:  # fidelity.with_compare_bands
        if m["valid"]:
            scenario = Scenario.model_validate(m["query"])
            m["error_band"] = bands.band_for(rows, scenario, m["summary"]["fits"])
    return result


def compare_json(req: compare.Request, hardware: Registry, rows: Sequence[Row]) -> Iterator[bytes]:
    """/api/compare's body, encoded as its route's ``-> Any``."""
    return route_json(compare_model(req, hardware, rows))


def compare_lines(
    req: compare.Request, hardware: Registry, rows: Sequence[Row], gzipped: bool
) -> Iterator[bytes]:
    """/api/compare's lines (compare_stream.lines): a refusal raises before the first."""
    return lines(req, hardware, RowsBoard(rows), gzipped)


def trace_chunks(scenario: Scenario, hardware: Registry) -> Iterator[bytes]:
    """/api/trace's body (trace.trace_chunks)."""
    return chrome_trace.chunks(evaluate(scenario, hardware))


def flow_json(blobs: list[bytes]) -> Iterator[bytes]:
    """/api/flow's body from the scenario's cached JSON (its one blob)."""
    return json_pieces(flow.flow_view(json.loads(blobs[0])))


def analysis_json(
    info: RunInfo, step: int, hardware: Registry, blobs: list[bytes]
) -> Iterator[bytes]:
    """/api/runs/{run}/analysis's body (runs._analyse) from the window's stored records (one
    blob each, as the store keeps them)."""
    records = [parse_stored_record(text) for text in blobs]
    return json_pieces(analysis.analyse(info, records, step, hardware))


def plan_json(
    q: Any, hardware: Registry, max_candidates: int, rows: Sequence[Row] | None
) -> Iterator[bytes]:
    """/api/plan's body (plan.run_plan, judged by the board's rows), encoded as its route's
    ``-> dict[str, Any]``."""
    from app.api.plan import run_plan  # plan.py imports this module: imported when run

    return route_json(run_plan(q, hardware, max_candidates, RowsBoard(rows)), dict[str, Any])


def remote_plan(pool: Any, q: Any, hardware: Registry, max_candidates: int, board: Any) -> bytes:
    """On the server's side: ``plan_json`` in the app's worker pool (app/api/pool.py)."""
    return pool.call(plan_json, q, dict(hardware), max_candidates, board.rows())
