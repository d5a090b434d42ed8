"""GET /api/fidelity and the /fidelity page: the accuracy board, and the error band every
scenario's view carries beside its predicted step time.

The board is every published measured run (app/core/fidelity/published_runs.py) predicted by
the cost model in-sample and held out (app/core/fidelity/fit.py: board_rows, about as long as
one evaluate call per row). It is a pure function of the code, so it is computed once per
app, on first use, by whichever request needs it first (the others wait for that result), and
kept on ``app.state.fidelity``. The band (app/core/fidelity/bands.py: held-out rows of the
scenario's kind only) is attached in the web layer, inside the scenario cache's evaluator, so
the cached bytes, the pages and /api/scenario carry the same band; the core's evaluate stays
unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict, ValidationError

from app import i18n
from app.api import query_guard
from app.api.fidelity_schema import FidelityReport
from app.api.page_data import errors_by_field, respond
from app.core.fidelity import bands, fit
from app.core.fidelity import board as fidelity_board
from app.core.inputs.scenario import Scenario
from app.core.support.gc_pause import gc_paused
from app.i18n.lang import Lang
from app.paths import asset_dir

Evaluator = Callable[[Scenario], dict[str, Any]]


class FidelityBoard:
    """The published runs against the model: computed once, on first use, thread-safe.

    ``compute`` is fit.board_rows (in-sample and held out) unless a test counts calls. The lock
    is held while computing, so concurrent first requests wait for the one computation instead
    of repeating it.
    """

    def __init__(self, compute: Callable[[], list[fidelity_board.Row]] = fit.board_rows) -> None:
        self._compute = compute
        self._lock = threading.Lock()
        self._rows: list[fidelity_board.Row] | None = None
        self._report: dict[str, Any] | None = None

    def rows(self) -> list[fidelity_board.Row]:
        with self._lock:
            if self._rows is None:
                # Seconds of acyclic allocation: with the collector on, each full collection
                # of that heap held the GIL ~60 ms, stalling every other request meanwhile.
                self._rows = gc_paused(self._compute)()
            return self._rows

    def report(self) -> dict[str, Any]:
        """The board's JSON. Callers must not mutate it: one dict serves every request."""
        rows = self.rows()
        with self._lock:
            if self._report is None:
                self._report = bands.report(rows)
            return self._report

    def band(self, scenario: Scenario, fits: bool = True) -> dict[str, Any]:
        """The scenario's error band; ``fits``: whether it fits in memory (none when not)."""
        return bands.band_for(self.rows(), scenario, fits)


def banded(state: Any, run: Evaluator) -> Evaluator:
    """``run`` with the scenario's error band added beside its step time. The board is looked
    up on ``state`` at each call, so tests may hand several apps one computed board."""

    def evaluate_with_band(scenario: Scenario) -> dict[str, Any]:
        view = run(scenario)
        if "step_time_s" in view:
            view["error_band"] = state.fidelity.band(scenario, view["memory"]["fits"])
        return view

    return evaluate_with_band


def with_compare_bands(result: dict[str, Any], board: FidelityBoard) -> dict[str, Any]:
    """Each valid member of a comparison with its error band (the core's compare evaluates
    the members itself, outside the scenario cache)."""
    for m in result["members"]:
        if m["valid"]:
            fits = m["summary"]["fits"]
            m["error_band"] = board.band(Scenario.model_validate(m["query"]), fits)
    return result


# --- the JSON's schema, for the OpenAPI document ---------------------------------------------


DESCRIPTION = (
    "Every published, measured training run in the validation set as the scenario its source "
    "describes (`query`: open it with `/?` + the query), predicted with one set of constants "
    "per hardware generation, beside the flat 50%-of-peak baseline. `error` is (predicted - "
    "published) / published with the shipped constants (in-sample: they were fitted on these "
    "rows); `held_out_error` the same with the GEMM ceiling fitted without the row's source "
    "(`held_out_ceiling`, fitted on its generation's other sources, or on every other source "
    "when `held_out_pool` is `all`). A row the model cannot express has `reason` instead. "
    "`summary` and `sources` give median and max |error| and the rows within 10%, in-sample "
    "(`model`) and held out; `kinds` the held-out error band of each kind of configuration "
    "(generation, schedule, axes above 1, ZeRO-3, SP), `validated` with at least "
    "`min_band_rows` rows."
)

# --- the page ---------------------------------------------------------------------------------

SORTS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "source": lambda r: r["source"],
    "model": lambda r: r["model"],
    "hardware": lambda r: r["hardware"],
    "gpus": lambda r: r["gpus"],
    "published": lambda r: r["published_s"],
    "predicted": lambda r: r["predicted_s"],
    "error": lambda r: abs(r["error"]),
    "held_out_error": lambda r: abs(r["held_out_error"] or 0.0),
    "baseline_error": lambda r: abs(r["baseline_error"]),
}
SortKey = Literal["source", "model", "hardware", "gpus", "published", "predicted", "error",
                  "held_out_error", "baseline_error"]  # fmt: skip


class FidelityView(BaseModel):
    """The page's state: its language and how the predicted rows are sorted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lang: Lang = "en"  # one of the catalogues' languages (validation context)
    sort: SortKey | None = None  # None: the validation set's own order
    order: Literal["asc", "desc"] = "asc"


def parse_view(
    params: dict[str, str], catalog: i18n.Catalog | None = None
) -> tuple[FidelityView, dict[str, str]]:
    """The view state, and every problem by field; a bad field falls back to its default.
    ``lang`` may name any of ``catalog``'s languages (the app's; default: the shipped ones)."""
    catalog = catalog or i18n.default()
    try:
        return FidelityView.model_validate(params, context=catalog.context), {}
    except ValidationError as exc:
        errors = errors_by_field(exc, params.get("lang", "en"), catalog)
    good = {k: v for k, v in params.items() if k not in errors and k in FidelityView.model_fields}
    return FidelityView.model_validate(good, context=catalog.context), errors


def sorted_rows(rows: list[dict[str, Any]], view: FidelityView) -> list[dict[str, Any]]:
    if view.sort is None:
        return rows
    return sorted(rows, key=SORTS[view.sort], reverse=view.order == "desc")


def sort_href(view: FidelityView, key: str) -> str:
    """The link a column header carries: sort by it, or flip the order if it is the sort."""
    flip = view.sort == key and view.order == "asc"
    q = {"sort": key, **({"order": "desc"} if flip else {})}
    if view.lang != "en":
        q["lang"] = view.lang
    return f"/fidelity?{urlencode(q)}#rows"


def scenario_href(row: dict[str, Any], lang: str) -> str:
    return "/?" + urlencode({**row["query"], **({"lang": lang} if lang != "en" else {})})


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter()

    @router.get(
        "/api/fidelity",
        tags=["fidelity"],
        summary="The cost model against every published measured run: rows, summary, bands",
        description=DESCRIPTION,
        response_model=FidelityReport,
        dependencies=[Depends(query_guard.declared_only)],
    )
    def get_fidelity(request: Request) -> dict[str, Any]:
        return request.app.state.fidelity.report()

    @router.get("/fidelity", response_class=HTMLResponse, include_in_schema=False)
    def fidelity_page(request: Request) -> HTMLResponse:
        view, errors = parse_view(dict(request.query_params), request.app.state.i18n)
        board = request.app.state.fidelity.report()
        data = {
            "page": "fidelity",
            "state": view.model_dump(),
            "defaults": FidelityView().model_dump(),
            "view_keys": sorted(FidelityView.model_fields),
            "errors": errors,
        }
        predicted = [r for r in board["rows"] if not r["reason"]]
        return respond(
            templates, request, data,
            board=board,
            predicted=sorted_rows(predicted, view),
            left=[r for r in board["rows"] if r["reason"]],
            view=view,
            sort_href=lambda key: sort_href(view, key),
            scenario_href=lambda row: scenario_href(row, view.lang),
            unknown=errors,
            query=urlencode({"lang": view.lang} if view.lang != "en" else {}),
            scenario_query="",
        )  # fmt: skip

    return router
