"""GET /api/plan: rank every valid configuration for a model, GPU count and batch.

The search costs about 0.8 ms per candidate, and a GPU count with many divisors has
thousands (15,120 GPUs: 9,264, 7 s of CPU), so the pool is counted first (cheap) and more
than ``settings.plan_max_candidates`` is a 422 on ``gpus``. The search runs on the thread
pool under one of the app's heavy-request slots (app/api/limits.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from app.api.hardware import Registry, RegistryDep
from app.api.limits import HeavyLimiter, heavy
from app.core.evaluate.planner import candidates, plan
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import ScenarioError


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
    responses={
        422: {"description": "A parameter is invalid; `detail` names it and why"},
        429: {"description": "Too many heavy requests at once; retry after `Retry-After` s"},
    },
)
async def get_plan(
    q: Annotated[PlanQuery, Query()],
    registry: RegistryDep,
    request: Request,
    limiter: Annotated[HeavyLimiter, Depends(heavy)],
) -> dict[str, Any]:
    bound = request.app.state.settings.plan_max_candidates
    return await limiter.run(run_plan, q, registry, bound)


def run_plan(q: PlanQuery, registry: Registry, max_candidates: int | None = None) -> dict[str, Any]:
    """The plan for a validated query; names checked against the app's hardware registry,
    and the candidate pool against ``max_candidates`` (None: unbounded)."""
    if q.model not in MODELS:
        raise ScenarioError(
            "model", f"unknown model preset {q.model!r}; one of: {', '.join(MODELS)}"
        )
    if q.hardware not in registry:
        raise ScenarioError(
            "hardware", f"unknown hardware {q.hardware!r}; one of: {', '.join(registry)}"
        )
    if max_candidates is not None:
        pool = len(candidates(MODELS[q.model], registry[q.hardware], q.gpus, q.global_batch))
        if pool > max_candidates:
            raise ScenarioError(
                "gpus",
                f"{q.gpus} GPUs at global_batch {q.global_batch} give {pool} configurations "
                f"to search, more than this server's bound of {max_candidates}; "
                "choose a GPU count with fewer divisors or a smaller batch",
            )
    return plan(q.model, q.hardware, q.gpus, q.global_batch, q.top, registry)
