"""GET /api/sweep and the /trend page: one knob swept, one line per schedule or value.

The page carries the same JSON ``/api/sweep`` returns, so its first charts need no fetch. A
bad parameter renders the page anyway with the reason beside its control, and status 422.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, ValidationError

from app import i18n
from app.api import controls
from app.api.hardware import Registry, RegistryDep
from app.api.page_data import errors_by_field, reason_text, respond
from app.core.evaluate.sweep import KNOBS, SWEEP_KEYS, SweepParams, sweep
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import ScheduleName
from app.paths import asset_dir


class SweepQuery(SweepParams, Scenario):
    """The base scenario's parameters plus the sweep's own."""


class TrendView(BaseModel):
    """The trend page's own view state: what a click on a point opens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    open: Literal["overview", "flow"] = "overview"


PAGE_KEYS = frozenset(TrendView.model_fields)
router = APIRouter(tags=["trend"])


def split(q: SweepQuery) -> tuple[Scenario, SweepParams]:
    """The base scenario and the sweep, each holding only what the URL set."""
    scenario = {k: getattr(q, k) for k in Scenario.model_fields if k in q.model_fields_set}
    sweep_part = {k: getattr(q, k) for k in SWEEP_KEYS if k in q.model_fields_set}
    return Scenario.model_validate(scenario), SweepParams.model_validate(sweep_part)


@router.get(
    "/api/sweep",
    summary="Sweep one knob: bubble, memory, step time, tokens/s, comm shares and MFU",
    description="Every point carries its scenario's `query` (the share link); an invalid "
    "point is kept, with `valid: false` and the `field` and `reason` the core gave.",
    responses={422: {"description": "A parameter is invalid; `detail` names it and why"}},
)
def get_sweep(q: Annotated[SweepQuery, Query()], registry: RegistryDep) -> dict[str, Any]:
    return sweep(*split(q), hardware=registry)


def _validated(
    model: type[BaseModel],
    raw: dict[str, str],
    errors: dict[str, str],
    lang: str = "en",
    catalog: i18n.Catalog | None = None,
) -> Any:
    catalog = catalog or i18n.default()  # its languages are the ones lang may name
    try:
        return model.model_validate(raw, context=catalog.context)
    except ValidationError as exc:
        errors.update(errors_by_field(exc, lang, catalog))
        return None


def build_trend(
    params: dict[str, str], registry: Registry, catalog: i18n.Catalog | None = None
) -> dict[str, Any]:
    """The page's data: the sweep (or None) and the errors, keyed by field."""
    view_raw = {k: v for k, v in params.items() if k in controls.VIEW_KEYS}
    page_raw = {k: v for k, v in params.items() if k in PAGE_KEYS}
    rest = {k: v for k, v in params.items() if k not in controls.VIEW_KEYS | PAGE_KEYS}
    errors: dict[str, str] = {}
    lang = params.get("lang", "en")
    view = _validated(controls.ViewState, view_raw, errors, lang, catalog) or controls.ViewState()
    page = _validated(TrendView, page_raw, errors, lang, catalog) or TrendView()
    result = None
    both = _validated(SweepQuery, rest, errors, lang, catalog)
    if both is not None:
        try:
            result = sweep(*split(both), hardware=registry)
        except ScenarioError as exc:
            errors[exc.field] = reason_text(exc, view.lang, catalog)
    defaults = {**controls.defaults(), **SweepParams().model_dump(), **TrendView().model_dump()}
    return {
        "page": "trend",
        "sweep": result if not errors else None,
        "state": {**view.model_dump(), **page.model_dump()},
        "defaults": defaults,
        "sweep_keys": sorted(SWEEP_KEYS),
        "view_keys": sorted(controls.VIEW_KEYS | PAGE_KEYS),
        "errors": errors,
    }


def sweep_options(t) -> dict[str, list[tuple[str, str]]]:
    knobs = [(k, t(f"trend.knob.{k}")) for k in KNOBS]
    series = [(s, t(f"trend.series.{s}")) for s in ("none", "schedule", "fp8")]
    return {"knob": knobs, "series": series + knobs, "scale": [(s, t(f"trend.scale.{s}"))
            for s in ("linear", "doubling")], "open": [(v, t(f"nav.{v}"))
            for v in ("overview", "flow")]}  # fmt: skip


def make_page_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    pages = APIRouter(tags=["pages"], include_in_schema=False)

    @pages.get("/trend", response_class=HTMLResponse)
    def trend_page(request: Request, registry: RegistryDep) -> HTMLResponse:
        params = dict(request.query_params)
        catalog = request.app.state.i18n
        data = build_trend(params, registry, catalog)
        t = catalog.translator(data["state"]["lang"])
        shared = {k: v for k, v in params.items() if k not in SWEEP_KEYS | PAGE_KEYS}
        placed = set(Scenario.model_fields) | SWEEP_KEYS | PAGE_KEYS
        return respond(
            templates, request, data,
            fields=controls.scenario_fields(registry),
            values=params,
            sweep_values={**SweepParams().model_dump(), "open": "overview", **params},
            options=sweep_options(t),
            schedules=[s.value for s in ScheduleName],
            unknown={k: v for k, v in data["errors"].items() if k not in placed},
            sweep=data["sweep"],
            query=urlencode(shared),
            scenario_query=urlencode(
                {k: v for k, v in shared.items() if k not in controls.VIEW_KEYS}
            ),
        )  # fmt: skip

    return pages
