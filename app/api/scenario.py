"""GET /api/scenario: one validated scenario in, everything the views draw out.

Answered from the app's ScenarioCache (app/api/scenario_cache.py): the same link opened by
many is computed once. A scenario's answer changes only when the server's code does, so it
carries an ETag (the version and a hash of the bytes) and may be reused for a while; a
client that sends the ETag back in If-None-Match gets a 304 and no body.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.api import costs
from app.api.compression import VARY, accepts_gzip
from app.api.limits import BUSY, heavy
from app.api.scenario_cache import Entry
from app.core.inputs.scenario import Scenario

router = APIRouter(tags=["scenario"])

ScenarioQuery = Annotated[Scenario, Query()]
# An hour: long enough for a class on one link, short enough that a redeploy shows up soon.
CACHE_CONTROL = "public, max-age=3600"


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """If-None-Match's weak comparison: any listed tag equal to ours, W/ aside, or "*"."""
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


def respond(request: Request, entry: Entry) -> Response:
    """The cached bytes as they are, gzipped ones to a client that takes gzip, or a 304."""
    headers = {"ETag": entry.etag, "Cache-Control": CACHE_CONTROL, **VARY}
    if not_modified(request.headers.get("if-none-match"), entry.etag):
        return Response(status_code=304, headers=headers)
    if entry.gzipped is not None and accepts_gzip(request.headers.get("accept-encoding", "")):
        headers["Content-Encoding"] = "gzip"
        return Response(entry.gzipped, media_type="application/json", headers=headers)
    return Response(entry.body, media_type="application/json", headers=headers)


@router.get(
    "/api/scenario",
    summary="Rank layout, schedule, simulated timeline and cost model for one scenario",
    response_model=dict[str, Any],
    responses={
        304: {"description": "If-None-Match holds this answer's ETag: reuse your copy"},
        422: {"description": "A parameter is invalid; `detail` names it and why"},
        **BUSY,
    },
)
async def get_scenario(scenario: ScenarioQuery, request: Request) -> Response:
    cache = request.app.state.scenario_cache
    # A hit is a lookup, answered here on the event loop: a hop to the thread pool per hit
    # was most of a hot link's latency under 50 clients. A miss computes (CPU-bound) or waits
    # on another request's computation, so it runs on the compute threads, as sync routes do,
    # under admission when its estimate is not light (issue 26: misses ran unadmitted).
    # A heavy miss is computed in a worker process (app/api/pool.py): evaluate and its JSON
    # held the GIL, and so the event loop, in turns with /healthz.
    admit, cost = heavy(request), costs.scenario(scenario)
    entry = cache.kept(scenario) or await admit.run_estimated(
        cache.entry, scenario, admit.pool_for(cost) is not None, cost=cost
    )
    return respond(request, entry)
