"""GET /api/flow and /api/orders: each view's derived data, for the page to re-fetch.

Same query as ``/api/scenario``. The data are rules about pipelines and layouts computed in
the core (``app.core.views.flow``, ``app.core.layout.orders``), so the page only draws them.
They start from the scenario's view model in the app's ScenarioCache, not from a fresh evaluate().
The flow data (38 MB for 393k actions) are made on the thread pool under a heavy-request slot
(app/api/limits.py) and streamed in pieces, so no one ``json.dumps`` holds the GIL for long.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from app.api import costs, pool_jobs
from app.api.json_chunks import json_pieces
from app.api.limits import BUSY, Admission, heavy
from app.api.pool import WorkerPool
from app.core.inputs.scenario import Scenario
from app.core.layout import orders
from app.core.views import flow
from app.errors import responses

router = APIRouter(tags=["views"])

ScenarioQuery = Annotated[Scenario, Query()]
Limiter = Annotated[Admission, Depends(heavy)]
INVALID = responses(422)
# Streamed, so FastAPI cannot tell the type from the route: JSON, said here.
JSON_BODY = {200: {"content": {"application/json": {"schema": {"type": "object"}}}}}


@router.get(
    "/api/flow",
    summary="PP sends, animation steps, in-flight activations and bubble so far",
    response_model=dict[str, Any],
    response_class=StreamingResponse,
    responses={**JSON_BODY, **INVALID, **BUSY},
)
async def get_flow(
    scenario: ScenarioQuery, request: Request, limiter: Limiter
) -> StreamingResponse:
    cache = request.app.state.scenario_cache
    cost = costs.scenario(scenario)  # kept or not: the flow data grow with the timeline
    pool = limiter.pool_for(cost)
    # The flow data are made (and a ScenarioError raised) before the first byte is sent; a
    # big one in a worker process (app/api/pool.py), from the cached JSON.
    prepare = (
        partial(_flow_pieces, cache, scenario)
        if pool is None
        else partial(_remote_flow, pool, cache, scenario)
    )
    return await limiter.stream(prepare, cost=cost, media_type="application/json")


def _flow_pieces(cache: Any, scenario: Scenario) -> Iterator[bytes]:
    return json_pieces(flow.flow_view(cache.model(scenario)))


def _remote_flow(pool: WorkerPool, cache: Any, scenario: Scenario) -> Iterator[bytes]:
    body = cache.entry(scenario, offload=True).body
    return pool.submit(pool_jobs.flow_json, blobs=[body]).first()


@router.get(
    "/api/orders",
    summary="For every rank order: how many nodes one group of each axis spans",
    responses={**INVALID, **BUSY},
)
async def get_orders(scenario: ScenarioQuery, request: Request, limiter: Limiter) -> dict[str, Any]:
    # Light once the scenario is kept (a layout's group spans); a scenario not yet kept is
    # evaluated first, under admission by its cost (issue 26).
    cache = request.app.state.scenario_cache
    cost = 0.0 if cache.kept(scenario) is not None else costs.scenario(scenario)
    offload = limiter.pool_for(cost) is not None  # a miss evaluated in a worker process
    return await limiter.run_estimated(_orders, cache, scenario, offload, cost=cost)


def _orders(cache: Any, scenario: Scenario, offload: bool) -> dict[str, Any]:
    lay = cache.model(scenario, offload, head=True)["layout"]
    return {"orders": orders.of_layout(lay)}
