"""GET /api/plan: rank every valid configuration for a model, GPU count and batch."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api.hardware import Registry, RegistryDep
from app.core.planner import plan
from app.core.presets import MODELS
from app.core.scenario import ScenarioError


class PlanQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field("gpt3-175b", description="model preset")
    hardware: str = Field("a100-80g", description="hardware preset or loaded profile")
    gpus: int = Field(64, ge=1, le=16_384)
    global_batch: int = Field(512, ge=1, le=65_536, description="sequences per step")
    top: int = Field(10, ge=1, le=20)


router = APIRouter(tags=["plan"])


@router.get(
    "/api/plan",
    summary="The best (dp, tp, pp, schedule, v, micro-batch, zero, recompute) that fit",
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_plan(q: Annotated[PlanQuery, Query()], registry: RegistryDep) -> dict[str, Any]:
    return run_plan(q, registry)


def run_plan(q: PlanQuery, registry: Registry) -> dict[str, Any]:
    """The plan for a validated query; names checked against the app's hardware registry."""
    if q.model not in MODELS:
        raise ScenarioError(
            "model", f"unknown model preset {q.model!r}; one of: {', '.join(MODELS)}"
        )
    if q.hardware not in registry:
        raise ScenarioError(
            "hardware", f"unknown hardware {q.hardware!r}; one of: {', '.join(registry)}"
        )
    return plan(q.model, q.hardware, q.gpus, q.global_batch, q.top, registry)
