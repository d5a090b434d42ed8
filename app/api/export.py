"""GET /api/export: one scenario as something to run (app.core.export): Megatron-LM flags,
a torchtitan TOML or torch's pipeline action CSV, each naming the framework release it
follows. A configuration the framework cannot run is a 200 with ``ok: false`` and the reason
(``cannot``); a bad ``format`` or scenario is a 422 naming the field, as /api/scenario's."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import Field

from app.core.export import export
from app.core.inputs.scenario import Scenario

router = APIRouter(tags=["export"])


class ExportQuery(Scenario):
    """The scenario's query, plus the format and the page's language a "Copy as" button sends
    along (so the OpenAPI schema lists every field, and the scenario's validators run as
    /api/scenario's do)."""

    format: Literal["megatron", "torchtitan", "torch-csv"] = Field(
        description="megatron: Megatron-LM flags; torchtitan: a TOML job config; torch-csv: "
        "the schedule as torch.distributed.pipelining's action CSV"
    )
    lang: str | None = Field(None, max_length=8, description="the page's language; unused")


@router.get(
    "/api/export",
    summary="The scenario as Megatron-LM flags, a torchtitan TOML, or torch's action CSV",
    response_model=dict[str, Any],
    responses={422: {"description": "format or a scenario field is invalid; `detail` says"}},
)
def get_export(q: Annotated[ExportQuery, Query()]) -> dict[str, Any]:
    # The scenario alone (its share line in the export names only its own fields); export()
    # applies the views' cross-field checks, and a ScenarioError is the app's 422.
    fields = q.model_dump(exclude={"format", "lang"}, exclude_defaults=True)
    return export(q.format, Scenario.model_validate(fields)).as_dict()
