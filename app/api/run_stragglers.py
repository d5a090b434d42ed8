"""``GET /api/runs/{run}/stragglers?step=&window=``: the run's slow ranks and slow links over
a window of steps, for the run page's grid (issue 25).

The analysis is app/core/traces/stragglers.py, the one the importers print: each rank's
compute against its pipeline stage's median, and each group's collective (or a stage pair's
receive) time against its axis's median. Its own module so that app/api/runs.py stays one
job; the window and its bound are the analysis's (app/api/runs.py), the work is heavy
(app/api/limits.py), costed like a /steps page of as many records (app/api/costs.py), and
cached beside the analyses per (run, step, window, rows read).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api import costs, query_guard
from app.api.limits import BUSY, Admission, heavy
from app.api.read_access import UNAUTHORIZED, require_read
from app.api.runs import analysis_key
from app.core.inputs.protocol import (
    MAX_STEP,
    RUN_NAME_PATTERN,
    RunInfo,
)
from app.core.inputs.protocol_fast import parse_stored_record
from app.core.layout.topology import Layout
from app.core.traces.stragglers import Straggler, find_stragglers
from app.errors import responses
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
# a slow link's phase -> its axis (cp and ep in a run with them: stragglers.PHASES)
AXIS_OF = {"tp": "tp", "dp": "dp", "pp_wait": "pp", "cp": "cp", "ep": "ep"}
JSON_BODY = {200: {"content": {"application/json": {"schema": {"type": "object"}}}}}


@router.get(
    "/{run}/stragglers",
    summary="Slow ranks (which phase, by how much against their stage) and slow links",
    response_class=Response,
    responses={**JSON_BODY, **responses(404), **BUSY},
)
async def get_stragglers(
    request: Request,
    run: RunName,
    limiter: Admit,
    step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
    window: Annotated[int, Query(ge=1, le=50)] = 10,
) -> Response:
    live: Live = request.app.state.live
    info, key = await run_in_threadpool(_key, live, run, step, window)
    body = live.analyses.get(key)
    if body is None:
        n = key[2] * info.world_size  # records read: a /steps page of as many (costs.py)
        body = await limiter.run(
            live.cached, key, partial(_compute, live, info, key), cost=costs.steps(info, n)
        )
    return Response(body, media_type="application/json")


def _key(live: Live, run: str, step: int | None, window: int) -> tuple[RunInfo, tuple]:
    """The analysis's own key and 404s/422s (runs.analysis_key), kept apart in the cache."""
    info, key = analysis_key(live, run, step, window)
    return info, ("stragglers", *key)


def _compute(live: Live, info: RunInfo, key: tuple) -> bytes:
    _, run, step, window, _ = key
    texts = live.reader.window(run, max(step - window + 1, 0), step)
    # Every step of the window, step 0 too, as the importers print it: the median over
    # steps already keeps one step's set-up cost from naming anybody, and with two steps
    # left that median is a mean (a 3.6 ms hiccup named a rank of the gloo fixture).
    records = [parse_stored_record(t) for t in texts]  # msgspec: ~4x faster than pydantic
    layout = layout_of(info)
    found = find_stragglers(records, layout)
    body = {
        "run": run,
        "step": step,
        "steps": sorted({r.step for r in records}),
        "stragglers": [straggler_json(s, layout) for s in found],
    }
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()


def straggler_json(s: Straggler, layout: Layout) -> dict[str, Any]:
    """One finding with the group it was measured against: a slow rank's pipeline stage
    (its DP x TP peers), a slow link's axis and group."""
    out: dict[str, Any] = {
        "cause": s.cause,
        "phase": s.phase,
        "ranks": list(s.ranks),
        "excess_s": s.excess_s,
        "ratio": s.ratio if s.ratio != float("inf") else None,
    }
    if s.cause == "rank":
        out["stage"] = layout.coord(s.ranks[0]).pp
    else:
        out["axis"] = AXIS_OF[s.phase]
    return out
