"""GET /api/primer and the /primer page: collectives made visible for one scenario.

The page takes the scenario's query plus ``group=dp|tp``, ``rank=`` and ``step=``, so its
link is its state; it embeds the same JSON ``/api/primer`` answers. A bad parameter is a 422
naming the field, on the API and on the page (which then shows the reason, not a primer).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ValidationError

from app import errors as http_errors
from app import i18n
from app.api import controls
from app.api.hardware import Registry, RegistryDep
from app.api.page_data import errors_by_field, reason_text, respond
from app.core.evaluate.primer import PRIMER_KEYS, PrimerParams, primer
from app.core.inputs.scenario import Scenario, ScenarioError
from app.paths import asset_dir

# The scenario pages' view keys the nav carries along (lang, t, colour, speed); ``rank`` is
# the primer's own (PrimerParams), so it is validated once.
VIEW_ONLY = controls.VIEW_KEYS - PRIMER_KEYS


class PrimerQuery(PrimerParams, Scenario):
    """The scenario's parameters plus the primer's own."""


def split(q: PrimerQuery) -> tuple[Scenario, PrimerParams]:
    """The scenario and the primer's state, each holding only what the URL set."""
    scen = {k: getattr(q, k) for k in Scenario.model_fields if k in q.model_fields_set}
    own = {k: getattr(q, k) for k in PRIMER_KEYS if k in q.model_fields_set}
    return Scenario.model_validate(scen), PrimerParams.model_validate(own)


def _validated(
    model: type[BaseModel],
    raw: dict[str, str],
    errs: dict[str, str],
    lang: str,
    catalog: i18n.Catalog,
):
    try:
        return model.model_validate(raw, context=catalog.context)  # lang: its languages
    except ValidationError as exc:
        errs.update(errors_by_field(exc, lang, catalog))
        return None


def _pick(params: dict[str, str], keys: frozenset[str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if k in keys}


def build_primer(
    params: dict[str, str], registry: Registry, catalog: i18n.Catalog | None = None
) -> dict[str, Any]:
    """The page's data: the primer (or None) and the errors, keyed by field."""
    catalog = catalog or i18n.default()
    lang = params.get("lang", "en")
    errs: dict[str, str] = {}
    view = _validated(controls.ViewState, _pick(params, VIEW_ONLY), errs, lang, catalog)
    own = _validated(PrimerParams, _pick(params, PRIMER_KEYS), errs, lang, catalog)
    rest = {k: v for k, v in params.items() if k not in VIEW_ONLY | PRIMER_KEYS}
    scenario = _validated(Scenario, rest, errs, lang, catalog)
    result = None
    if own is not None and scenario is not None:
        try:
            result = primer(scenario, own, registry)
        except ScenarioError as exc:
            errs[exc.field] = reason_text(exc, lang, catalog)
    if view is None:  # another view key was bad: keep the language if it is known
        known = {"lang": lang} if lang in catalog.langs else {}
        view = controls.ViewState.model_validate(known, context=catalog.context)
    state = {**view.model_dump(), **(own or PrimerParams()).model_dump()}
    return {
        "page": "primer",
        "primer": result if not errs else None,
        "state": state,
        "defaults": {**controls.defaults(), **PrimerParams().model_dump()},
        "view_keys": sorted(controls.VIEW_KEYS | PRIMER_KEYS),
        "errors": errs,
    }


def zero_links(params: dict[str, str]) -> list[tuple[int, str]]:
    """The same page at each ZeRO stage (the scenario's ``zero``, 0 left out as default)."""
    base = {k: v for k, v in params.items() if k != "zero"}
    return [(z, urlencode({**base, **({"zero": str(z)} if z else {})})) for z in range(4)]


# A mixture of experts small enough to read: Mixtral 8x7B's 8 experts over 4 EP ranks, folded
# over dp x cp as Megatron's tp-cp-ep-dp-pp order does (app/core/layout/mesh.py).
EP_EXAMPLE = {"model": "mixtral-8x7b", "dp": "4", "tp": "2", "pp": "1", "ep": "4",
              "order": "megatron-5d"}  # fmt: skip


def cp_ep_links(params: dict[str, str]) -> dict[str, str]:
    """The same page with cp toggled between 1 and 2 (from rank 0: the world changes), and a
    mixture-of-experts example that keeps the language and the hardware."""
    base = {k: v for k, v in params.items() if k not in {"cp", "step", "rank"}}
    cp_on = params.get("cp", "1") not in {"", "1"}
    keep = {k: v for k, v in params.items() if k in {"lang", "hardware"}}
    return {
        "cp": urlencode(base if cp_on else {**base, "cp": "2"}),
        "cp_to": "1" if cp_on else "2",
        "ep": urlencode({**keep, **EP_EXAMPLE, "group": "dp"}),
    }


router = APIRouter(tags=["primer"])


@router.get(
    "/api/primer",
    summary="Collectives primer: ring all-reduce steps, ZeRO partitions, memory over time",
    description="The ring runs on the DP or TP group (`group`) of `rank`; `step` is the one "
    "the page shows. Bytes come from the cost model (app/core/cost).",
    responses={422: {"description": "A parameter is invalid; `detail[].loc` names it"}},
)
def get_primer(q: Annotated[PrimerQuery, Query()], registry: RegistryDep) -> Any:
    try:
        return primer(*split(q), registry)
    except ScenarioError as exc:
        return http_errors.refused(exc)


def make_page_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    pages = APIRouter(tags=["pages"], include_in_schema=False)

    @pages.get("/primer", response_class=HTMLResponse)
    def primer_page(request: Request, registry: RegistryDep) -> HTMLResponse:
        params = dict(request.query_params)
        data = build_primer(params, registry, request.app.state.i18n)
        nav = {k: v for k, v in params.items() if k not in PRIMER_KEYS - {"rank"}}
        scen = {k: v for k, v in params.items() if k not in controls.VIEW_KEYS | PRIMER_KEYS}
        hidden = {k: v for k, v in params.items() if k not in {"group", "rank", "step"}}
        return respond(
            templates, request, data,
            primer=data["primer"],
            unknown=data["errors"],
            query=urlencode(nav),
            scenario_query=urlencode(scen),
            hidden=hidden,
            zero_links=zero_links(params),
            cp_ep_links=cp_ep_links(params),
        )  # fmt: skip

    return pages
