"""GET /api/trace: the scenario's simulated timeline as Chrome trace JSON (open in Perfetto)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from app.api.hardware import RegistryDep
from app.core import chrome_trace
from app.core.evaluate import evaluate
from app.core.scenario import Scenario

router = APIRouter(tags=["trace"])

ScenarioQuery = Annotated[Scenario, Query()]


@router.get(
    "/api/trace",
    summary="Chrome trace-event JSON: one process per pipeline rank, flows from send to recv",
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_trace(scenario: ScenarioQuery, registry: RegistryDep) -> JSONResponse:
    trace = chrome_trace.build(evaluate(scenario, registry))
    name = f"meshscope-{scenario.schedule.value}-pp{scenario.pp}-m{scenario.microbatches}.json"
    return JSONResponse(trace, headers={"Content-Disposition": f'attachment; filename="{name}"'})
