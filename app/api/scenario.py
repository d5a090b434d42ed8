"""GET /api/scenario: one validated scenario in, everything the views draw out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.core.evaluate import evaluate
from app.core.scenario import Scenario

router = APIRouter(tags=["scenario"])

ScenarioQuery = Annotated[Scenario, Query()]


@router.get(
    "/api/scenario",
    summary="Rank layout, schedule, simulated timeline and cost model for one scenario",
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_scenario(scenario: ScenarioQuery) -> dict[str, Any]:
    return evaluate(scenario)
