"""GET /plan: the planner as a page, server-rendered from the same JSON ``/api/plan`` returns.

Each row links to its scenario in the overview and the flow view. A bad parameter renders
the form with the reason beside it, and status 422. The search runs as /api/plan's does:
bounded in candidates, in a worker process, under a heavy-request slot (429 when none).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any, get_args
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, ValidationError

from app import i18n
from app.api import costs
from app.api.hardware import Registry, RegistryDep
from app.api.limits import heavy
from app.api.page_data import errors_by_field, reason_text, respond
from app.api.plan import KNOBS, Board, PlanQuery, run_plan
from app.api.pool import WorkerPool
from app.api.pool_jobs import remote_plan
from app.core.evaluate.planner_fp8 import SEARCH
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import ScenarioError
from app.core.inputs.training import Fp8Recipe
from app.i18n.lang import Lang
from app.paths import asset_dir


class PlanView(BaseModel):
    """The page's own state: only its language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Lang = "en"  # one of the catalogues' languages (validation context)


PLACED = frozenset(PlanQuery.model_fields) | frozenset(PlanView.model_fields)
GIB = 1 << 30
BEYOND = ("hardware", "kind", "schedule", "mfu")  # any other code names a knob


def reason_in(why: dict[str, Any], t) -> str:
    """A row's why in the page's language, from the planner's numbers."""
    lead = t(f"plan.reason.{why['lead']}").replace("{x}", f"{why['of_best']:.0%}")
    parts = {"lead": lead, "b": why["bubble"], "tp": why["tp_share"], "dp": why["dp_share"]}
    parts["mem"] = why["memory"]
    out = t("plan.reason.parts")
    for key, value in parts.items():
        out = out.replace("{" + key + "}", value if isinstance(value, str) else f"{value:.0%}")
    notes = [_note(n, t) for n in why.get("notes", ())]
    return "; ".join([out, *axes_in(why, t), *trust_in(why, t), *notes])


def axes_in(why: dict[str, Any], t) -> list[str]:
    """A row's HSDP shard group and FP8 recipe, and what each gains over the same row
    without it (planner._axes), in the page's language."""
    out = []
    if "hsdp" in why:
        h = why["hsdp"]
        where = t("plan.reason.hsdp_" + ("inside" if h["inside"] else "across"))
        out.append(_fill(t("plan.reason.hsdp"), {
            "shard": str(h["dp_shard"]), "replicas": str(h["replicas"]), "where": where,
            "gain": f"{h['gain'] - 1.0:+.0%}"}))  # fmt: skip
    if "fp8" in why:
        f = why["fp8"]
        out.append(_fill(t("plan.reason.fp8"), {"recipe": f["recipe"],
                                                "gain": f"{f['gain'] - 1.0:+.0%}"}))  # fmt: skip
    return out


def fp8_in(searched: dict[str, Any] | None, t) -> str | None:
    """What fp8=search found (planner_fp8.summary), in the page's language; None when the
    plan did not search FP8."""
    if not searched:
        return None
    if not searched["fp8_hardware"]:
        return _fill(t("plan.fp8.no_hardware"), {"hardware": searched["hardware"]})
    bf16 = searched.get("bf16")
    words = {"recipes": ", ".join(searched["searched"][1:]), "recipe": str(searched["chosen"])}
    if bf16:
        words |= {
            "bf16": f"{bf16['tokens_per_s']:,.0f}",
            "step": f"{bf16['step_time_s']:.3g}",
            "mfu": f"{bf16['mfu']:.1%}",
            "speedup": f"{searched.get('speedup', 1.0):.2f}×",
        }
    key = "plan.fp8.bf16_first" if searched["chosen"] in ("none", None) else "plan.fp8.chosen"
    return _fill(t(key), words)


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def free_in(why: dict[str, Any]) -> dict[str, str]:
    """A tight row's free memory and the headroom, as the page prints them."""
    return {"free": f"{why['margin_bytes'] / GIB:.1f} GiB", "pct": f"{why['margin']:.1%}",
            "headroom": f"{why['headroom']:.0%}"}  # fmt: skip


def trust_in(why: dict[str, Any], t) -> list[str]:
    """A row's memory margin and extrapolation notes in the page's language."""
    notes = [_fill(t("plan.tight.note"), free_in(why))] if why.get("tight") else []
    if why.get("extrapolated"):
        words = {"schedule": str(why.get("schedule")), "mfu": f"{why.get('mfu', 0.0):.0%}",
                 "ceiling": f"{why.get('mfu_ceiling') or 0.0:.0%}"}  # fmt: skip
        said = [
            _fill(t(f"plan.beyond.{code}"), words)
            if code in BEYOND
            else _fill(t("plan.beyond.knob"), {"knob": t(f"plan.knob.{code}")})
            for code in why["extrapolated"]
        ]
        notes.append(t("plan.beyond.lead").replace("{list}", " · ".join(said)))
    return notes


def _note(note: dict[str, Any], t) -> str:
    text = t(f"plan.note.{note['code']}")
    for key, value in note.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def build_plan(
    params: dict[str, str],
    registry: Registry,
    max_candidates: int | None = None,
    catalog: i18n.Catalog | None = None,
    fidelity: Board | None = None,
    planner: Callable[..., dict[str, Any]] = run_plan,
) -> dict[str, Any]:
    """The page's data; ``planner``: run_plan, or the same in a worker process (_pooled)."""
    catalog = catalog or i18n.default()  # its languages are the ones lang may name
    lang = params.get("lang", "en")
    errors: dict[str, str] = {}
    view = PlanView()
    try:
        raw = {k: v for k, v in params.items() if k == "lang"}
        view = PlanView.model_validate(raw, context=catalog.context)
    except ValidationError as exc:
        errors.update(errors_by_field(exc, lang, catalog))
    result = None
    try:
        # An empty sequence length is the form's "the model's own" (PlanQuery's None).
        given = {k: v for k, v in params.items() if k != "lang" and (k, v) != ("seq_len", "")}
        query = PlanQuery.model_validate(given)
        result = planner(query, registry, max_candidates, fidelity)
    except ValidationError as exc:
        errors.update(errors_by_field(exc, lang, catalog))
    except ScenarioError as exc:
        errors[exc.field] = reason_text(exc, lang, catalog)
    return {
        "page": "plan",
        "plan": result if not errors else None,
        "state": view.model_dump(),
        "defaults": {**PlanQuery().model_dump(), **PlanView().model_dump()},
        "view_keys": ["lang"],
        "errors": errors,
    }


def _pooled(pool: WorkerPool, q: PlanQuery, *args: Any) -> dict[str, Any]:
    """run_plan in the app's worker pool (as /api/plan's): the search held the server's GIL
    (issue 26); the page renders the very JSON /api/plan returns."""
    return json.loads(remote_plan(pool, q, *args))


def _bf16_link(searched: dict[str, Any] | None, lang: str) -> str | None:
    """The overview of the fastest bf16 row fp8=search simulated, if any."""
    if not searched or "bf16" not in searched:
        return None
    return _links(searched["bf16"], lang)["overview"]


def _links(row: dict[str, Any], lang: str) -> dict[str, str]:
    query = urlencode({**row["query"], **({"lang": lang} if lang != "en" else {})})
    return {"overview": f"/?{query}", "flow": f"/flow?{query}"}


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter(tags=["pages"], include_in_schema=False)

    @router.get("/plan", response_class=HTMLResponse)
    async def plan_page(request: Request, registry: RegistryDep) -> HTMLResponse:
        params = dict(request.query_params)
        bound = request.app.state.settings.plan_max_candidates
        catalog = request.app.state.i18n
        board = request.app.state.fidelity  # rows judged against the published runs
        admission = heavy(request)
        pool = admission.pool_for(costs.PLAN)
        planner = run_plan if pool is None else partial(_pooled, pool)
        data = await admission.run(
            build_plan, params, registry, bound, catalog, board, planner, cost=costs.PLAN
        )
        lang, errors = data["state"]["lang"], data["errors"]
        t = catalog.translator(lang)
        return respond(
            templates, request, data,
            values={**data["defaults"], **params},
            models=list(MODELS),
            hardware=list(registry),
            fp8_recipes=[*get_args(Fp8Recipe), SEARCH],
            unknown={k: v for k, v in errors.items() if k not in PLACED},
            plan=data["plan"],
            links=lambda row: _links(row, lang),
            reason=lambda why: reason_in(why, t),
            fp8_found=fp8_in((data["plan"] or {}).get("fp8"), t),
            bf16_link=_bf16_link((data["plan"] or {}).get("fp8"), lang),
            free=free_in,
            knobs=KNOBS,
            query=urlencode({"lang": lang} if lang != "en" else {}),
            scenario_query="",
        )  # fmt: skip

    return router
