"""GET /api/export: one scenario as something to run (app.core.export): Megatron-LM flags,
a torchtitan TOML or torch's pipeline action CSV, each naming the framework release it
follows. A configuration the framework cannot run is a 200 with ``ok: false`` and the reason
(``cannot``); a bad ``format`` or scenario is a 422 naming the field, as /api/scenario's."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from app.core.export import FORMATS, export
from app.core.inputs.scenario import Scenario
from app.errors import clean_errors, issue, unprocessable

router = APIRouter(tags=["export"])
# Query keys that are not the scenario's: the format, and the page's language and view state
# a "Copy as" button sends along with the page's own query.
_NOT_SCENARIO = ("format", "lang")


@router.get(
    "/api/export",
    summary="The scenario as Megatron-LM flags, a torchtitan TOML, or torch's action CSV",
    response_model=dict[str, Any],
    responses={422: {"description": "format or a scenario field is invalid; `detail` says"}},
)
def get_export(request: Request, format: str) -> Any:  # noqa: A002 (the query's name)
    if format not in FORMATS:
        msg = f"unknown export format; one of: {', '.join(FORMATS)}"
        return unprocessable([issue(["query", "format"], msg, "enum", {"expected": FORMATS})])
    params = {k: v for k, v in request.query_params.items() if k not in _NOT_SCENARIO}
    try:
        scenario = Scenario.model_validate(params)
    except ValidationError as exc:
        return unprocessable(clean_errors(exc.errors(), ("query",)))
    # export() applies the views' cross-field checks: a ScenarioError is the app's 422.
    return JSONResponse(export(format, scenario).as_dict())
