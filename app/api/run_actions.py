"""Whole-run answers from a run's per-action events in DuckDB (issue 25):

* ``GET /api/runs/{run}/actions?first=&last=``: per rank (its dp, pp, tp, and cp and ep in
  a run with either) and kind, steps seen, actions, total, mean, p50 and p95 of the action
  durations over the current rows of those steps;
* ``GET /api/runs/{run}/stragglers/run?first=&last=``: slow ranks and slow links over
  those steps, from each rank's medians (app/core/traces/run_stragglers.py); the window
  answer (``/stragglers``, app/api/run_stragglers.py) is unchanged;
* ``GET /api/runs/{run}/actions.parquet?first=&last=``: the current actions as one Parquet
  file, for pandas, polars or DuckDB; its columns are the same for every run (cp and ep 0
  in a run without them), so files of several runs concatenate.

Each catches the run's segments up first (app/live/actions_segments.py) under the heavy
admission (app/api/limits.py), one slot (app/api/costs.py ``ACTIONS``); the read token is
required as for every run answer. ``first`` defaults to 0, ``last`` to the run's last step.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import partial
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from app.api import costs, query_guard
from app.api.limits import BUSY, Admission, heavy
from app.api.read_access import UNAUTHORIZED, require_read
from app.api.run_stragglers import straggler_json
from app.core.inputs.protocol import MAX_STEP, RUN_NAME_PATTERN, RunInfo
from app.core.inputs.scenario import ScenarioError
from app.core.traces.run_stragglers import find_run_stragglers
from app.errors import responses
from app.live import actions_query
from app.live.analysis import layout_of
from app.live.services import Live

router = APIRouter(
    prefix="/api/runs",
    tags=["runs"],
    dependencies=[Depends(require_read), Depends(query_guard.declared_only)],
    responses=UNAUTHORIZED,
)
RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]
Admit = Annotated[Admission, Depends(heavy)]
First = Annotated[int | None, Query(ge=0, le=MAX_STEP, description="first step (default 0)")]
Last = Annotated[int | None, Query(ge=0, le=MAX_STEP, description="last step (default: the last)")]
JSON_BODY = {200: {"content": {"application/json": {"schema": {"type": "object"}}}}}
PARQUET = "application/vnd.apache.parquet"
PARQUET_BODY = {200: {"content": {PARQUET: {"schema": {"type": "string", "format": "binary"}}}}}
ERRORS = {**responses(404, 422), **BUSY}


async def _asked(
    request: Request, run: str, limiter: Admission, first: int | None, last: int | None, fn
) -> tuple[RunInfo, int, int, Any]:
    """The run's info, the step range, and ``fn(con, segments, first=, last=)`` over the run's
    caught-up segments, in one heavy slot."""
    live: Live = request.app.state.live
    info, lo, hi = await run_in_threadpool(steps_range, live, run, first, last)
    answer = await limiter.run(
        live.actions.query, run, partial(fn, first=lo, last=hi), cost=costs.ACTIONS
    )
    return info, lo, hi, answer


@router.get(
    "/{run}/actions",
    summary="Per rank and action kind over a range of steps: count, total, mean, p50, p95",
    response_class=Response,
    responses={**JSON_BODY, **ERRORS},
)
async def get_actions(
    request: Request, run: RunName, limiter: Admit, first: First = None, last: Last = None
) -> Response:
    info, lo, hi, table = await _asked(
        request, run, limiter, first, last, actions_query.phase_table
    )
    if info.cp == 1 and info.ep == 1:  # a 3D run's ranks are named as before cp and ep
        table = [{k: v for k, v in r.items() if k not in ("cp", "ep")} for r in table]
    return _json({"run": run, "first": lo, "last": hi, "ranks": table})


@router.get(
    "/{run}/stragglers/run",
    summary="Slow ranks and slow links over a range of steps, from each rank's medians",
    response_class=Response,
    responses={**JSON_BODY, **ERRORS},
)
async def get_run_stragglers(
    request: Request, run: RunName, limiter: Admit, first: First = None, last: Last = None
) -> Response:
    info, lo, hi, medians = await _asked(
        request, run, limiter, first, last, actions_query.rank_medians
    )
    layout = layout_of(info)
    found = find_run_stragglers(medians, layout)
    body = {"run": run, "scope": "run", "first": lo, "last": hi, "ranks": len(medians),
            "stragglers": [straggler_json(s, layout) for s in found]}  # fmt: skip
    return _json(body)


@router.get(
    "/{run}/actions.parquet",
    summary="The current actions of a range of steps as one Parquet file",
    response_class=FileResponse,
    responses={**PARQUET_BODY, **ERRORS},
)
async def get_actions_parquet(
    request: Request, run: RunName, limiter: Admit, first: First = None, last: Last = None
) -> FileResponse:
    fd, name = tempfile.mkstemp(prefix="meshscope-actions-", suffix=".parquet")
    os.close(fd)
    out = FilePath(name)
    try:
        _, lo, hi, _ = await _asked(
            request, run, limiter, first, last, partial(actions_query.export, out=out)
        )
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return TemporaryFileResponse(
        out, media_type=PARQUET, filename=f"{run}-actions-{lo}-{hi}.parquet"
    )


class TemporaryFileResponse(FileResponse):
    """A file sent once and then removed, however the send ends: a background task runs
    only after the last byte, so a client that went away mid-file left the file behind."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            FilePath(self.path).unlink(missing_ok=True)


def steps_range(
    live: Live, run: str, first: int | None, last: int | None
) -> tuple[RunInfo, int, int]:
    """The run's info and the step range asked for: 404 for a run that is not there or has
    no step yet, 422 naming ``first`` or ``last`` for a range outside the run."""
    row = live.reader.run(run)
    if row is None:
        raise HTTPException(404, f"no run named {run!r}")
    info = RunInfo.model_validate_json(row["info"])
    stored = [step for _, step, _ in live.reader.rank_rows(run).values()]
    if not stored:
        raise HTTPException(404, f"run {run!r} has no steps yet")
    end = max(max(stored), info.steps - 1)
    lo = 0 if first is None else first
    hi = max(stored) if last is None else last
    if hi > end:
        raise ScenarioError.keyed(
            "last", "actions.past_end", "last step {last} is past the run's last step {end}",
            last=hi, end=end,
        )  # fmt: skip
    if lo > hi:
        raise ScenarioError.keyed(
            "first", "actions.first_after_last", "first step {first} is after last step {last}",
            first=lo, last=hi,
        )  # fmt: skip
    return info, lo, hi


def _json(body: dict[str, Any]) -> Response:
    text = json.dumps(body, separators=(",", ":"), allow_nan=False)
    return Response(text.encode(), media_type="application/json")
