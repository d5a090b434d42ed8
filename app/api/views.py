"""GET /api/flow and /api/orders: each view's derived data, for the page to re-fetch.

Same query as ``/api/scenario``. The data are rules about pipelines and layouts computed in
the core (``app.core.flow``, ``app.core.orders``), so the page only draws them. They start
from the scenario's view model in the app's ScenarioCache, not from a fresh evaluate().
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.core import flow, orders
from app.core.scenario import Scenario

router = APIRouter(tags=["views"])

ScenarioQuery = Annotated[Scenario, Query()]


@router.get(
    "/api/flow",
    summary="PP sends, animation steps, in-flight activations and bubble so far",
    response_model=dict[str, Any],
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_flow(scenario: ScenarioQuery, request: Request) -> JSONResponse:
    # Plain JSON data already: skip jsonable_encoder's walk.
    return JSONResponse(flow.flow_view(request.app.state.scenario_cache.model(scenario)))


@router.get(
    "/api/orders",
    summary="For every rank order: how many nodes one group of each axis spans",
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_orders(scenario: ScenarioQuery, request: Request) -> dict[str, Any]:
    lay = request.app.state.scenario_cache.model(scenario)["layout"]
    sizes = lay["sizes"]
    return {"orders": orders.compare(sizes["dp"], sizes["tp"], sizes["pp"], lay["gpus_per_node"])}
