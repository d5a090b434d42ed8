"""GET /api/scenario: one validated scenario in, everything the views draw out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from app.core.evaluate import evaluate
from app.core.scenario import Scenario

router = APIRouter(tags=["scenario"])

ScenarioQuery = Annotated[Scenario, Query()]


@router.get(
    "/api/scenario",
    summary="Rank layout, schedule, simulated timeline and cost model for one scenario",
    response_model=dict[str, Any],
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_scenario(scenario: ScenarioQuery) -> JSONResponse:
    # Returned as a response: the view model is plain JSON data already, and FastAPI's
    # jsonable_encoder walk over it took most of a 1,024-GPU request.
    return JSONResponse(evaluate(scenario))
