"""Measured runs over HTTP: the list, one run, its steps for replay, one step's analysis.

``GET /api/runs``                      runs, newest first, with status and last step
``GET /api/runs/{run}``                config, status, per-rank states, step-time trend,
                                       and how many rank-steps are still to be received
``GET /api/runs/{run}/steps?since=S``  current records with step > S, whole steps, paged
``GET /api/runs/{run}/analysis?step=`` the live page's step view (app.live.analysis)
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response

from app.core.inputs.protocol import MAX_STEP, RUN_NAME_PATTERN, ProbeRecord, RunInfo
from app.live import analysis
from app.live.services import Live

router = APIRouter(prefix="/api/runs", tags=["runs"])
RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]
TREND_ROWS = 2000  # app.live.store_read.Reader.trend's default limit
# A rank no longer watched that did not finish: dead in a failed run, ended (its records in
# its spool) in an incomplete one.
UNWATCHED_STATE = {"failed": "dead", "incomplete": "ended"}


def get_live(request: Request) -> Live:
    return request.app.state.live


LiveDep = Annotated[Live, Depends(get_live)]


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    info = json.loads(row.pop("info"))
    keys = ("dp", "tp", "pp", "schedule", "microbatches", "virtual_stages", "device")
    return row | {k: info[k] for k in keys}


def completeness(live: Live, run: str, row: dict[str, Any], trend: list[dict]) -> dict[str, int]:
    """Rank-steps planned (world x steps), received (current stored rows) and the difference:
    what "incomplete: N records not yet received" counts. A rank runs every planned step
    unless it fails, so after a clean end the difference is exactly what the spools still
    hold; the trend has one row per stored step, each with its count of ranks."""
    expected = row["world"] * row["steps"]
    rows = trend if len(trend) < TREND_ROWS else live.reader.trend(run, limit=row["steps"])
    received = sum(p["ranks"] for p in rows)
    return {"expected": expected, "received": received, "unreceived": max(expected - received, 0)}


def _run_or_404(live: Live, run: str) -> dict[str, Any]:
    row = live.reader.run(run)
    if row is None:
        raise HTTPException(404, f"no run named {run!r}")
    return row


@router.get("", summary="Measured runs, newest first")
def list_runs(live: LiveDep) -> dict[str, Any]:
    return {"runs": [_summary(r) for r in live.reader.runs()]}


@router.get("/{run}", summary="One run: config, status, ranks, step-time trend")
def get_run(run: RunName, live: LiveDep) -> dict[str, Any]:
    row = _run_or_404(live, run)
    info = json.loads(row.pop("info"))
    watched = live.liveness.snapshot(run) or {}
    cursors = live.reader.rank_cursors(run)

    def state(rank: int) -> str:
        # Liveness watches unfinished runs only; past those, the stored cursor says enough.
        if rank in watched:
            return watched[rank]
        finished = rank in cursors and cursors[rank][1] >= info["steps"] - 1
        return "done" if finished else UNWATCHED_STATE.get(row["status"], "unknown")

    ranks = [
        {
            "rank": r,
            "state": state(r),
            "attempt": cursors[r][0] if r in cursors else None,
            "last_step": cursors[r][1] if r in cursors else None,
        }
        for r in range(row["world"])
    ]
    trend = live.reader.trend(run)
    return row | {
        "info": info,
        "ranks": ranks,
        "trend": trend,
        "records": completeness(live, run, row, trend),
        "events": live.reader.events(run),
        "superseded": live.reader.superseded(run),
    }


@router.get("/{run}/steps", summary="Records after a step, for replay and catching up")
def get_steps(
    run: RunName,
    live: LiveDep,
    since: Annotated[int, Query(ge=-1, le=MAX_STEP)] = -1,
    limit: Annotated[int, Query(ge=1, le=20_000)] = 2_000,
) -> dict[str, Any]:
    _run_or_404(live, run)
    records, next_since = live.reader.steps(run, since, limit)
    return {"run": run, "since": since, "records": records, "next_since": next_since}


@router.get(
    "/{run}/analysis",
    summary="One step measured vs predicted, bubble causes, heatmap",
    response_class=Response,
)
def get_analysis(
    run: RunName,
    live: LiveDep,
    step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
    window: Annotated[int, Query(ge=1, le=50)] = 10,
) -> Response:
    row = _run_or_404(live, run)
    info = RunInfo.model_validate_json(row["info"])
    if step is None:
        trend = live.reader.trend(run, limit=1)
        if not trend:
            raise HTTPException(404, f"run {run!r} has no steps yet")
        step = trend[-1]["step"]
    first = max(step - window + 1, 0)
    key = (run, step, window, live.reader.signature(run, first, step))
    if not any(s == step for s, _, _ in key[3]):
        raise HTTPException(404, f"run {run!r} has no records of step {step}")

    def compute() -> bytes:
        texts = live.reader.window(run, first, step)
        view = analysis.analyse(info, [ProbeRecord.model_validate_json(t) for t in texts], step)
        return json.dumps(view, separators=(",", ":"), allow_nan=False).encode()

    # Cached encoded: every viewer following a run asks for the same step within a second.
    return Response(live.cached(key, compute), media_type="application/json")
