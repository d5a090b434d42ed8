"""GET /api/plan: rank every valid configuration for a model, GPU count and batch.

The search costs about 0.3 ms per candidate, and a GPU count with many divisors has
thousands (15,120 GPUs: 9,264), so the pool is counted first (cheap) and more than
``settings.plan_max_candidates`` is a 422 on ``gpus``; a pool with cp or ep is capped by the
planner itself (planner_axes.BUDGET). The search runs on the thread
pool under one of the app's heavy-request slots (app/api/limits.py).

What the published runs say of each row (its error band, whether any validated run is like
it) comes from the accuracy board, which the core's planner may not import
(app.core.evaluate sits below app.core.fidelity): ``judge_of`` turns the board's rows into
the planner's Judge here, in the web layer, which may import both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from app.api import costs
from app.api.hardware import Registry, RegistryDep
from app.api.limits import Admission, heavy
from app.api.pool_jobs import remote_plan
from app.core.cost import flops
from app.core.evaluate import planner_fp8
from app.core.evaluate.planner import plan, searched
from app.core.evaluate.planner_search import KNOB_FIELDS as KNOBS
from app.core.evaluate.planner_trust import (
    DEFAULT_HEADROOM,
    ERROR_BAND,
    MAX_HEADROOM,
    Judge,
    Shape,
    Verdict,
    unjudged,
)
from app.core.fidelity import bands, board, kinds
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import check_fp8, model_of
from app.core.support.echo import echo

# A recipe every row runs (training.Fp8Recipe), or "search" (planner_fp8): one Literal, so
# that a bad value's 422 names the field alone (a union adds the member it failed to its
# loc); tests/api/test_plan_fp8.py checks it against Fp8Recipe.
PlanFp8 = Literal["none", "tensorwise", "blockwise", "mxfp8", "search"]


class PlanQuery(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    model: str = Field("gpt3-175b", description="model preset")
    hardware: str = Field("a100-80g", description="hardware preset or loaded profile")
    gpus: int = Field(64, ge=1, le=16_384)
    global_batch: int = Field(512, ge=1, le=65_536, description="sequences per step")
    top: int = Field(10, ge=1, le=20)
    seq_len: int | None = Field(
        None, ge=1, le=1 << 20, description="tokens per sequence (default: the model's); "
        "above 8,192 the planner also searches context parallelism (cp)",
    )  # fmt: skip
    fp8: PlanFp8 = Field(
        "none",
        description="the FP8 recipe every row runs (none: 16-bit; an explicit recipe needs "
        "FP8 hardware), or search: the planner tries bf16 and the hardware's FP8 recipes "
        "(tensorwise; mxfp8 on Blackwell) and says which it chose and what bf16 would take; "
        "on hardware without FP8, search plans bf16 and says so",
    )
    headroom: float = Field(
        DEFAULT_HEADROOM,
        ge=0.0,
        le=MAX_HEADROOM,
        description="share of HBM a row must leave free not to be marked tight (0.05 = 5%)",
    )


def _check_fp8(q: PlanQuery, registry: Registry) -> None:
    """The recipe against the hardware, as a scenario checks it (specs.check_fp8); search
    tries only what the hardware runs (planner_fp8.recipes)."""
    if q.fp8 not in ("none", planner_fp8.SEARCH):
        check_fp8(Scenario(hardware=q.hardware, fp8=q.fp8), registry[q.hardware])


class Board(Protocol):
    """The accuracy board as app.state.fidelity holds it (app/api/fidelity.py)."""

    def rows(self) -> list[board.Row]: ...


def published_mfu(row: board.Row) -> float:
    """A predicted board row's measured MFU: model FLOPs over its published step time and
    the GPUs' peak (Chowdhery et al. 2022 App. B), as the planner's rows count theirs."""
    s, run = board.scenario_of(row.run), row.run
    model_f = flops.model_flops(model_of(s), run.global_batch)  # a MoE row: its preset
    return model_f / (row.published_s * run.gpus * HARDWARE[s.hardware].peak_tflops * 1e12)


def judge_of(rows: Sequence[board.Row]) -> Judge:
    """The planner's Judge from the board's rows: the held-out error band of a row's kind
    (bands.band_for's rule; its max |error|: a tight row must stay faster whichever way the
    model errs), the nearest validated kind's when its own has too few rows, and what no
    predicted published run validates: its hardware generation, its kind, its schedule, a
    knob (SP, the overlaps) on that no run had on; with the highest MFU published on its
    generation by runs that split the model as it does (TP or PP > 1) or not, which a row
    above is flagged for."""
    predicted = [r for r in rows if not r.reason]
    scenarios = [board.scenario_of(r.run) for r in predicted]
    schedules = {s.schedule.value for s in scenarios}
    table = bands.by_kind(rows)
    # "kind" is the mesh and ZeRO-3 (the schedule and SP have reasons of their own).
    meshes = {_mesh(k) for k in table}
    knobs = {k for s in scenarios for k in KNOBS if getattr(s, k)}
    # A small model's MFU on one node says nothing of a TP/PP mesh's: ceilings per generation
    # and per whether the model is split (TP or PP > 1).
    ceilings: dict[tuple[str | None, bool], float] = {}
    for r, s in zip(predicted, scenarios, strict=True):
        key = (kinds.generation(s.hardware), s.tp > 1 or s.pp > 1)
        ceilings[key] = max(ceilings.get(key, 0.0), published_mfu(r))

    def judge(shape: Shape) -> Verdict:
        kind = _kind(shape)
        gen = kind.generation
        why = ["hardware"] if gen is None else [] if _mesh(kind) in meshes else ["kind"]
        why += [] if shape.schedule in schedules else ["schedule"]
        why += [k for k in shape.knobs if k not in knobs]
        split = shape.tp > 1 or shape.pp > 1
        ceiling = ceilings.get((gen, split)) or ceilings.get((gen, not split))
        return Verdict(*_band(kind, table), tuple(why), ceiling)

    return judge


def _mesh(k: kinds.ConfigKind) -> tuple:
    return k.generation, k.tp, k.pp, k.dp, k.zero3


def _kind(shape: Shape) -> kinds.ConfigKind:
    """kinds.kind_of for a planner row, which has no Scenario of its own yet."""
    return kinds.ConfigKind(
        generation=kinds.generation(shape.hardware),
        schedule=shape.schedule if shape.pp > 1 else kinds.NO_PIPELINE,
        tp=shape.tp > 1, pp=shape.pp > 1, dp=shape.dp > 1, zero3=shape.zero == 3,
        sp="sequence_parallel" in shape.knobs and shape.tp > 1,
    )  # fmt: skip


def _band(kind: kinds.ConfigKind, table: dict) -> tuple[float, str]:
    """The kind's held-out max |error| (validated: MIN_ROWS rows), else its nearest validated
    kind's, else the constant."""
    if kind.generation is None:  # no fitted constants: no published run speaks for it
        return ERROR_BAND, "constant"
    mine = table.get(kind, [])
    if len(mine) >= bands.MIN_ROWS:
        return bands.summary([r.held_out_error for r in mine])["max_abs"], "kind"
    near = bands.nearest(kind, table)
    return (near["max_abs"], "nearest") if near else (ERROR_BAND, "constant")


router = APIRouter(tags=["plan"])


@router.get(
    "/api/plan",
    summary="The best (dp, tp, pp, cp, ep, schedule, v, micro-batch, zero, recompute) that fit",
    responses={
        422: {"description": "A parameter is invalid; `detail` names it and why"},
        429: {"description": "Too many heavy requests at once; retry after `Retry-After` s"},
    },
)
async def get_plan(
    q: Annotated[PlanQuery, Query()],
    registry: RegistryDep,
    request: Request,
    limiter: Annotated[Admission, Depends(heavy)],
) -> dict[str, Any]:
    bound = request.app.state.settings.plan_max_candidates
    board, pool = request.app.state.fidelity, limiter.pool_for(costs.PLAN)
    if pool is None:
        return await limiter.run(run_plan, q, registry, bound, board, cost=costs.PLAN)
    # In a worker process (app/api/pool.py): the search held the server's GIL (issue 26).
    body = await limiter.run(remote_plan, pool, q, registry, bound, board, cost=costs.PLAN)
    return Response(body, media_type="application/json")


def run_plan(
    q: PlanQuery,
    registry: Registry,
    max_candidates: int | None = None,
    fidelity: Board | None = None,
) -> dict[str, Any]:
    """The plan for a validated query; names checked against the app's hardware registry,
    and the candidate pool against ``max_candidates`` (None: unbounded). ``fidelity``: the
    accuracy board rows are judged by (None: not judged, the constant error band)."""
    if q.model not in MODELS:
        raise ScenarioError.keyed(
            "model", "scenario.model_unknown", "unknown model preset {model}; one of: {known}",
            model=echo(q.model), known=", ".join(MODELS),
        )  # fmt: skip
    if q.hardware not in registry:
        raise ScenarioError.keyed(
            "hardware", "scenario.hardware_unknown",
            "unknown hardware preset {hardware}; one of: {known}",
            hardware=echo(q.hardware), known=", ".join(registry),
        )  # fmt: skip
    _check_fp8(q, registry)
    # Counted once and handed to plan(), which would otherwise build it again.
    shape = None if q.seq_len is None else {"seq_len": q.seq_len}
    search = searched(q.model, q.hardware, q.gpus, q.global_batch, registry, shape, q.fp8)
    pool = search[1]
    if max_candidates is not None and len(pool) > max_candidates:
        raise ScenarioError.keyed(
            "gpus", "plan.pool_bound",
            "{gpus} GPUs at global_batch {batch} give {pool} configurations to search, "
            "more than this server's bound of {bound}; choose a GPU count with fewer "
            "divisors or a smaller batch",
            gpus=q.gpus, batch=q.global_batch, pool=len(pool), bound=max_candidates,
        )  # fmt: skip
    judge = unjudged if fidelity is None else judge_of(fidelity.rows())
    recipes = planner_fp8.recipes(registry[q.hardware]) if q.fp8 == planner_fp8.SEARCH else None
    result = plan(
        q.model, q.hardware, q.gpus, q.global_batch, q.top, registry, q.headroom, judge, search,
        shape, recipes,
    )  # fmt: skip
    for row in (*result["results"], *result["not_fitting"]):
        # plan()'s rows keep the 3D fields its golden answers pin; cp, ep, HSDP's dp_shard
        # and the FP8 recipe are read here from each row's scenario (its query leaves out
        # the defaults: 1, None for all of dp, none).
        query = row["query"]
        row["cp"], row["ep"] = (int(query.get(k, 1)) for k in ("cp", "ep"))
        row["dp_shard"] = int(query["dp_shard"]) if "dp_shard" in query else None
        row["fp8"] = query.get("fp8", "none")
    return {**result, "judged": fidelity is not None}
