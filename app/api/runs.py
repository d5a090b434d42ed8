"""Measured runs over HTTP: the list, one run, its steps for replay, one step's analysis.

``GET /api/runs``                      runs, newest first, with status, last step and verdict
``GET /api/runs/{run}``                config, status, per-rank states, step-time trend, the
                                       verdict (app.live.verdict) and the records it counts
``GET /api/runs/{run}/steps?since=S``  current records with step > S, whole steps, paged
``GET /api/runs/{run}/analysis?step=`` the live page's step view (app.live.analysis), cached
                                       per step; a miss is a heavy request (429 when busy)

``?lang=`` on the first two picks the language of the verdict's words (``label``,
``summary``, ``lines``); every other field is the same in every language.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api import costs, pool_jobs, query_guard
from app.api.json_chunks import json_pieces
from app.api.limits import BUSY, Admission, heavy
from app.api.pool import WorkerPool
from app.api.read_access import UNAUTHORIZED, require_read
from app.core.inputs.protocol import (
    MAX_STEP,
    MAX_STEP_EVENTS,
    RUN_NAME_PATTERN,
    RunInfo,
    oversize,
)
from app.core.inputs.protocol_fast import parse_stored_record
from app.errors import responses
from app.i18n.lang import query_lang
from app.live import analysis, event_text, verdict
from app.live.metrics_read import UNFINISHED
from app.live.services import Live

# MESHSCOPE_READ_TOKEN, when set, guards every route here (app/api/read_access.py).
router = APIRouter(
    prefix="/api/runs",
    tags=["runs"],
    dependencies=[Depends(require_read), Depends(query_guard.declared_only)],
    responses=UNAUTHORIZED,
)
RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]
# A rank no longer watched that did not finish: dead in a failed run, ended (its records in
# its spool) in an incomplete one.
UNWATCHED_STATE = {"failed": "dead", "incomplete": "ended"}
# Events one analysis parses: its window of steps, each at most MAX_STEP_EVENTS (a full
# window of the biggest steps, ~700 MB of parsed records at 233 MB per 200k events).
MAX_WINDOW_EVENTS = 10 * MAX_STEP_EVENTS
NOT_FOUND = responses(404)
JSON_BODY = {200: {"content": {"application/json": {"schema": {"type": "object"}}}}}
Admit = Annotated[Admission, Depends(heavy)]


def get_live(request: Request) -> Live:
    return request.app.state.live


LiveDep = Annotated[Live, Depends(get_live)]
Lang = Annotated[str, Depends(query_lang)]


def rank_states(live: Live, row: dict[str, Any], rows: dict[int, tuple]) -> dict[int, str]:
    """Rank -> state. Liveness watches unfinished runs only; past those, the stored rows say
    enough: a rank at its final step is done, any other dead (failed) or ended (incomplete)."""
    watched = live.liveness.snapshot(row["run"]) or {}
    out = {}
    for rank in range(row["world"]):
        if rank in watched:
            out[rank] = watched[rank]
        elif rank in rows and rows[rank][1] >= row["steps"] - 1:
            out[rank] = "done"
        else:
            out[rank] = UNWATCHED_STATE.get(row["status"], "unknown")
    return out


def whole_at(row: dict[str, Any], rows: dict[int, tuple]) -> int:
    """Ranks that make a step whole on the run's page. While the run may still report, its
    world; once it is over, the ranks that reported at all, so that the import of one rank's
    log (DeepSpeed prints its timers on rank 0 alone) draws its steps with the ranks there
    and the rest left blank, not a page that waits for ranks no file holds."""
    if row["status"] in UNFINISHED or not rows:
        return row["world"]
    return len(rows)


def run_verdict(live: Live, row: dict[str, Any], t, rows=None, states=None) -> dict[str, Any]:
    """The run's one status (app.live.verdict), with its words in ``t``'s language: what the
    runs list, the run page and both APIs show. ``rows``/``states``: the run's
    ``Reader.rank_rows`` and rank states when already read."""

    def states_of(found: dict) -> dict[int, str]:
        return states if states is not None else rank_states(live, row, found)

    v = verdict.of_run(live.reader, row, states_of, rows)
    return v | verdict.words(v, t)


def _summary(live: Live, row: dict[str, Any], t) -> dict[str, Any]:
    info = json.loads(row.pop("info"))
    keys = ("dp", "tp", "pp", "schedule", "microbatches", "virtual_stages", "device")
    v = run_verdict(live, row, t)
    short = {k: v[k] for k in ("status", "label", "summary", "step", "first")}
    beyond = {k: info[k] for k in ("cp", "ep") if k in info}  # stored only when > 1
    return row | {k: info[k] for k in keys} | beyond | {"verdict": short}


def completeness(row: dict[str, Any], v: dict[str, Any]) -> dict[str, int]:
    """Rank-steps planned (world x steps), received (current stored rows), and unreceived:
    records that exist in the probe's spools but not here (the verdict's ``in_spool``: never
    the steps a failed run did not reach). While a run is live or stale nobody knows yet
    which exist, and unreceived is planned minus received, as before."""
    rec = v["records"]
    known = v["status"] in ("failed", "incomplete", "complete")
    unreceived = rec["in_spool"] if known else max(rec["planned"] - rec["received"], 0)
    return {"expected": rec["planned"], "received": rec["received"], "unreceived": unreceived}


def _run_or_404(live: Live, run: str) -> dict[str, Any]:
    row = live.reader.run(run)
    if row is None:
        raise HTTPException(404, f"no run named {run!r}")
    return row


@router.get("", summary="Measured runs, newest first, each with its verdict")
def list_runs(request: Request, live: LiveDep, lang: Lang) -> dict[str, Any]:
    t = request.app.state.i18n.translator(lang)
    return {"runs": [_summary(live, r, t) for r in live.reader.runs()]}


@router.get(
    "/{run}",
    summary="One run: config, verdict, ranks, step-time trend",
    response_model=dict[str, Any],
    responses=NOT_FOUND,
)
def get_run(request: Request, run: RunName, live: LiveDep, lang: Lang) -> Response:
    # Encoded here with json, and the trend (2,000 rows) spliced in as SQLite encoded it
    # (Reader.trend_json) as the body's last member: FastAPI's encoder spent more time on
    # those rows than the summaries' reads (app.live.summary) take.
    body = _json(_run_body(request, run, live, lang))
    trend = live.reader.trend_json(run).encode()
    return Response(body[:-1] + b',"trend":' + trend + b"}", media_type="application/json")


def _json(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _run_body(request: Request, run: str, live: Live, lang: str) -> dict[str, Any]:
    row = _run_or_404(live, run)
    info = json.loads(row["info"])
    rows = live.reader.rank_rows(run)
    states = rank_states(live, row, rows)
    t = request.app.state.i18n.translator(lang)
    v = run_verdict(live, row, t, rows, states)
    roles = {v["first"]["rank"]: "first"} if v["first"] else {}
    roles |= {b["rank"]: "blocked" for b in v["blocked"]}
    ranks = [
        {
            "rank": r,
            "state": states[r],
            "role": roles.get(r),  # failed: the rank that failed first, or blocked on it
            "attempt": rows[r][0] if r in rows else None,
            "last_step": rows[r][1] if r in rows else None,
        }
        for r in range(row["world"])
    ]
    del row["info"]
    return row | {
        "info": info,
        "ranks": ranks,
        "whole_at": whole_at(row, rows),
        "verdict": v,
        "records": completeness(row, v),
        "events": event_text.for_page(live.reader.events(run), t),  # worded in lang
        "superseded": live.reader.superseded(run),
    }


@router.get(
    "/{run}/steps",
    summary="Records after a step, for replay and catching up",
    response_model=dict[str, Any],
    responses={**NOT_FOUND, **BUSY},
)
async def get_steps(
    run: RunName,
    live: LiveDep,
    admit: Admit,
    since: Annotated[int, Query(ge=-1, le=MAX_STEP)] = -1,
    limit: Annotated[int, Query(ge=1, le=20_000)] = 2_000,
) -> Response:
    row = await run_in_threadpool(_run_or_404, live, run)
    info = RunInfo.model_validate_json(row["info"])
    # A page parses at most a bounded number of events (app/api/costs.py), under admission by
    # that bound (issue 26: pages of steps ran unadmitted on the compute threads).
    limit = costs.steps_limit(info, limit)
    body = await admit.run_estimated(_steps, live, run, since, limit, cost=costs.steps(info, limit))
    return Response(body, media_type="application/json")


def _steps(live: Live, run: str, since: int, limit: int) -> bytes:
    """The page spliced from the stored records' own JSON, on the compute thread: parsing
    each record and dumping the page held the GIL for one C call per record and one for
    the whole page, stalling the event loop (issue 26 item 2)."""
    texts, next_since = live.reader.steps_text(run, since, limit)
    head = json.dumps({"run": run, "since": since}, separators=(",", ":"))[:-1]
    tail = f'],"next_since":{json.dumps(next_since)}}}'
    return "".join((head, ',"records":[', ",".join(texts), tail)).encode()


@router.get(
    "/{run}/analysis",
    summary="One step: measured, its replay, the cost model's prediction, bubble causes",
    response_class=Response,
    responses={**JSON_BODY, **NOT_FOUND, **BUSY},
)
async def get_analysis(
    request: Request,
    run: RunName,
    live: LiveDep,
    limiter: Admit,
    step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
    window: Annotated[int, Query(ge=1, le=50)] = 10,
) -> Response:
    info, key = await run_in_threadpool(analysis_key, live, run, step, window)
    # Cached encoded, per (run, step, window, the rows read): every viewer following a run
    # asks for the same step within a second, and a hit needs no slot.
    body = live.analyses.get(key)
    if body is None:
        # A miss simulates the run's schedule: a heavy request (app/api/limits.py), so a few
        # at a time off the event loop; the slot's holder looks in the cache again first.
        # Its parse, replay and JSON in a worker process (app/api/pool.py) when the app has
        # one: on the server's threads they held the GIL in turns with /healthz (issue 26).
        hardware, cost = request.app.state.hardware, costs.analysis(info, key[2])
        pool = limiter.pool_for(cost)
        analyse = partial(_analyse, live, info, key, hardware, pool)
        body = await limiter.run(live.cached, key, analyse, cost=cost)
    return Response(body, media_type="application/json")


def analysis_key(live: Live, run: str, step: int | None, window: int) -> tuple[RunInfo, tuple]:
    """The run's info and the cache key of its step's analysis: 404s for what is not there."""
    row = _run_or_404(live, run)
    info = RunInfo.model_validate_json(row["info"])
    if oversize(info):  # stored before hellos were bounded (issue 26): too big to replay
        raise HTTPException(422, f"run {run!r} is too large to analyse: {oversize(info)}")
    if step is None:
        trend = live.reader.trend(run, limit=1)
        if not trend:
            raise HTTPException(404, f"run {run!r} has no steps yet")
        step = trend[-1]["step"]
    # No more steps than the analysis can parse (window=50 of 64 ranks' 20k-event records
    # would be 64M events): the bound of a full window of the run's biggest steps.
    window = max(1, min(window, MAX_WINDOW_EVENTS // (info.world_size * info.events_cap())))
    first = max(step - window + 1, 0)
    key = (run, step, window, live.reader.signature(run, first, step))
    if not any(s == step for s, _, _ in key[3]):
        raise HTTPException(404, f"run {run!r} has no records of step {step}")
    return info, key


def _analyse(live: Live, info: RunInfo, key: tuple, hardware, pool: WorkerPool | None) -> bytes:
    run, step, window, _ = key
    texts = live.reader.window(run, max(step - window + 1, 0), step)
    if pool is not None:  # each record its own blob: no one pickle of the window's ~60 MB
        blobs = [text.encode() for text in texts]
        return pool.call(pool_jobs.analysis_json, info, step, dict(hardware), blobs=blobs)
    # msgspec, and the view in pieces: pydantic's parse of one 7,200-event record and one
    # json.dumps of the whole view each held the GIL, and so the event loop (issue 26 item 2).
    records = [parse_stored_record(t) for t in texts]
    view = analysis.analyse(info, records, step, hardware)
    return b"".join(json_pieces(view))
