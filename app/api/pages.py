"""GET / (overview) and GET /flow: server-rendered pages with the view model embedded.

A shared link shows the right picture before any fetch: the page carries the same JSON
``/api/scenario`` returns (parsed from the app's ScenarioCache, so a link many open is
evaluated once for the API and the pages alike), plus the view's derived data. A bad
parameter renders the page anyway, with the reason beside the control to change, and status
422 (never a 500).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from app import i18n
from app.api import controls, costs, limits
from app.api.page_data import errors_by_field, reason_text, respond
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.layout import orders
from app.core.layout.topology import (
    ARTICLE_DEMO,
    ARTICLE_PATH,
    Layout,
    active_by_step,
    article_printout,
)
from app.core.views import flow
from app.paths import asset_dir

Evaluator = Callable[[Scenario], dict[str, Any]]
# View-state controls each page draws; an error on any other key goes to the page's banner.
PAGE_CONTROLS = {"overview": {"color", "rank"}, "flow": {"speed", "t", "rank", "playing"}}
# ?preset=NAME answers a redirect to the whole query, so the address bar keeps every value.
PAGE_PRESETS = {"article": ARTICLE_DEMO}
ARTICLE_MAX_ROWS = 32  # the printout is one row per GPU: past this it is a wall, not a lesson


def get_evaluator(request: Request) -> Evaluator:
    """The core's evaluate through the app's cache; a dependency so tests can feed the page
    a richer (or barer) view model."""
    return request.app.state.scenario_cache.model


EvaluatorDep = Annotated[Evaluator, Depends(get_evaluator)]


def parse(
    params: dict[str, str], catalog: i18n.Catalog | None = None
) -> tuple[Scenario | None, controls.ViewState, dict[str, str]]:
    """Split the query into scenario and view state; collect every problem by field, worded
    from ``catalog`` (the app's; its languages are the ones ``lang`` may name)."""
    catalog = catalog or i18n.default()
    lang = params.get("lang", "en")
    view_raw = {k: v for k, v in params.items() if k in controls.VIEW_KEYS}
    scen_raw = {k: v for k, v in params.items() if k not in controls.VIEW_KEYS}
    errors: dict[str, str] = {}
    try:
        view = controls.ViewState.model_validate(view_raw, context=catalog.context)
    except ValidationError as exc:
        errors.update(errors_by_field(exc, lang, catalog))
        good = {k: v for k, v in view_raw.items() if k not in errors}
        view = controls.ViewState.model_validate(good, context=catalog.context)
    try:
        scenario = Scenario.model_validate(scen_raw)
    except ValidationError as exc:
        errors.update(errors_by_field(exc, lang, catalog))
        scenario = None
    return scenario, view, errors


def build_view(
    name: str, params: dict[str, str], run: Evaluator, catalog: i18n.Catalog | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The page's data: the view model (or None) and the errors, keyed by field."""
    scenario, view, errors = parse(params, catalog)
    model = extra = None
    if scenario is not None:
        try:
            model = run(scenario)
        except ScenarioError as exc:
            errors[exc.field] = reason_text(exc, view.lang, catalog)
        except limits.TooLargeToEmbed as big:  # the browser fetches it (limits.py)
            extra = big.deferred()
    if model is not None and view.rank is not None and view.rank >= model["layout"]["world_size"]:
        outside = ScenarioError.keyed(
            "rank", "page.rank_outside", "rank {rank} is outside the world of {world}",
            rank=view.rank, world=model["layout"]["world_size"],
        )  # fmt: skip
        errors["rank"] = reason_text(outside, view.lang, catalog)
    if model is not None:
        extra = page_extra(name, model)
    data = {
        "page": name,
        "model": model if not errors else None,
        "extra": extra if not errors else None,
        "state": view.model_dump(),
        "defaults": controls.defaults(),
        "view_keys": sorted(controls.VIEW_KEYS),
        "errors": errors,
    }
    return data, errors


def page_extra(name: str, model: dict[str, Any]) -> dict[str, Any]:
    """What each view adds to the core's view model (derived in the core, not in JS)."""
    lay = model["layout"]
    if name == "flow":
        return flow.flow_view(model)
    return {"orders": orders.of_layout(lay)}


def orphans(name: str, errors: dict[str, str]) -> dict[str, str]:
    """Errors with no control on this page to show them beside (unknown or other-view keys)."""
    placed = set(Scenario.model_fields) | PAGE_CONTROLS[name]
    return {k: v for k, v in errors.items() if k not in placed}


def article_view(params: dict[str, str], model: dict[str, Any] | None) -> dict[str, Any] | None:
    """The article's demo panel when the scenario is a step of its path, else None."""
    raw = {k: v for k, v in params.items() if k not in controls.VIEW_KEYS}
    if model is None or "preset" in raw:
        return None
    scenario = Scenario.model_validate(raw)  # model is not None: this query already validated
    here = next((k for k, q in ARTICLE_PATH if Scenario.model_validate(q) == scenario), None)
    if here is None:
        return None
    lay, lang = model["layout"], params.get("lang", "en")
    layout = Layout(**lay["sizes"], order=tuple(lay["order"].split("-")),
                    gpus_per_node=lay["gpus_per_node"])  # fmt: skip
    small, m, p = (
        layout.world_size <= ARTICLE_MAX_ROWS,
        model["schedule"]["microbatches"],
        layout.pp,
    )
    lang_q = {"lang": lang} if lang != "en" else {}
    return {
        "here": here,
        "sizes": lay["sizes"],
        "microbatches": m,
        # GPipe's closed form (Huang et al. 2019): (p-1)/(m+p-1), beside the simulated fraction.
        "bubble": {
            "idle": p - 1,
            "slots": m + p - 1,
            "fraction": model["timeline"]["bubble_fraction"],
        },  # fmt: skip
        "rows": article_printout(layout) if small else None,
        "steps": active_by_step(layout, model["timeline"]["events"])
        if model["schedule"]["forward_only"]
        else None,
        "path": [(key, urlencode({**q, **lang_q})) for key, q in ARTICLE_PATH],
    }


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter(tags=["pages"], include_in_schema=False)

    def render(name: str, request: Request, run: Evaluator) -> HTMLResponse:
        params = dict(request.query_params)
        preset = params.get("preset")
        if preset in PAGE_PRESETS:
            rest = {k: v for k, v in params.items() if k != "preset"}
            target = urlencode({**PAGE_PRESETS[preset], **rest})
            return RedirectResponse(f"{request.url.path}?{target}", status_code=303)
        catalog = request.app.state.i18n
        data, errors = build_view(name, params, run, catalog)
        if preset is not None:
            unknown_preset = ScenarioError.keyed(
                "preset", "page.preset_unknown", "unknown preset; one of: {known}",
                known=", ".join(PAGE_PRESETS),
            )  # fmt: skip
            errors["preset"] = reason_text(unknown_preset, data["state"]["lang"], catalog)
        scenario_params = {k: v for k, v in params.items() if k not in controls.VIEW_KEYS}
        return respond(
            templates, request, data,
            fields=controls.scenario_fields(request.app.state.hardware),
            values=params,
            unknown=orphans(name, errors),
            model=data["model"],
            query=urlencode(params),
            scenario_query=urlencode(scenario_params),
            article=article_view(params, data["model"]),
            t=catalog.translator(data["state"]["lang"], quiz=True),  # the article panel's
        )  # fmt: skip

    @router.get("/", response_class=HTMLResponse)
    async def overview(request: Request, run: EvaluatorDep) -> HTMLResponse:
        # A scenario not yet kept is evaluated here: under admission by its cost (issue 26).
        cost = costs.query(request.query_params, request.app.state.scenario_cache)
        pooled = limits.offloaded(request, run)  # a heavy miss: in a worker process
        return await limits.heavy(request).run_estimated(
            render, "overview", request, pooled, cost=cost
        )

    @router.get("/flow", response_class=HTMLResponse)
    async def flow_page(request: Request, run: EvaluatorDep) -> HTMLResponse:
        # Off the event loop under a heavy-request slot; a view model too big to embed is
        # left for the browser to fetch (app/api/limits.py: embed_bounded).
        bounded = limits.embed_bounded(request, run)
        return await limits.heavy(request).run(render, "flow", request, bounded)

    return router
