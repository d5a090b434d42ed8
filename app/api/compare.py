"""GET /api/compare and GET /compare: 2-4 scenarios (or a preset) side by side.

The page embeds the same JSON the API returns, so a shared link draws before any fetch;
except a big preset (a cost over the light bound), whose page comes at once and streams the
columns in as lines (compare_stream), drawing each as it comes.
A bad parameter is a 422 whose ``detail[].loc`` names it: ``["query", "s", 1, "dp"]`` for
the second scenario's dp, ``["query", "dp"]`` for a preset's base. The page answers 422 too,
with the reasons listed and the preset buttons to start over.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from app import errors, i18n
from app.api import compare_stream, controls, costs, pool_jobs
from app.api.fidelity import with_compare_bands
from app.api.hardware import Registry, RegistryDep
from app.api.limits import BUSY, heavy
from app.api.page_data import respond
from app.api.pool import WorkerPool
from app.core.evaluate import compare
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario
from app.i18n.errors import message, unknown_lang
from app.paths import asset_dir

PAGE_VIEW_KEYS = frozenset({"lang"})
DESCRIPTION = (
    "Either `s` 2 to 4 times, each a URL-encoded scenario query (the form `/api/scenario` "
    "takes, e.g. `dp=4&tp=2`), or `preset` plus any scenario parameters as the preset's "
    "base. `factory` compares DP only, TP only, PP only and the base for the same GPUs, "
    "model and global batch; `schedules` runs the base under all 7 pipeline schedules (the "
    "one exception to the 2-4 cap). No parameters: the factory comparison of a teaching "
    "base. A refused preset member is kept, marked `valid: false` with the reason."
)


def _unprocessable(exc: compare.CompareError) -> JSONResponse:
    return errors.unprocessable(
        [errors.issue(list(i.loc), i.msg, i.kind, i.ctx) for i in exc.issues]
    )


def _options(registry: Registry) -> dict[str, Any]:
    fields = {f["name"]: f for f in controls.scenario_fields(registry)}
    return {
        "models": list(MODELS),
        "hardware": list(registry),
        "schedules": [o["value"] for o in fields["schedule"]["options"]],
        "orders": controls.order_options(),
    }


def _page_errors(
    exc: compare.CompareError | None, lang: str, catalog: i18n.Catalog
) -> dict[str, str]:
    """Issues keyed by their loc without "query": "dp", "preset", "s.1.dp", each worded in
    the page's language (its message key's template, else the English message)."""
    out: dict[str, str] = {}
    table = catalog.table(lang)
    for i in exc.issues if exc else []:
        loc = errors.issue(list(i.loc), i.msg)["loc"]  # a typed parameter name comes back cut
        key = ".".join(str(x) for x in loc if x != "query") or "query"
        text = message({"type": i.kind, "msg": i.msg, "ctx": i.ctx}, lang, table)
        out.setdefault(key, text)
    return out


async def _admitted(
    request: Request,
    pairs: list[tuple[str, str]],
    view_keys: frozenset[str],
    registry: Registry,
    encoded: bool = False,
) -> dict[str, Any] | bytes:
    """The comparison, parsed first (a 422 needs no slot), then evaluated under admission by
    its members' cost: four big scenarios were 13.6 s and 470 MB unadmitted (issue 26). A
    heavy one is made in a worker process (app/api/pool.py): as the JSON the API answers
    when ``encoded``, else as the page's dict."""
    req = compare.parse(pairs, view_keys)
    board = request.app.state.fidelity
    admit, cost = heavy(request), costs.scenarios(req.members)
    pool = admit.pool_for(cost)
    if pool is None:
        return await admit.run_estimated(_banded, req, registry, board, cost=cost)
    job = pool_jobs.compare_json if encoded else pool_jobs.compare_model
    return await admit.run(_remote, pool, job, req, registry, board, cost=cost)


def _remote(
    pool: WorkerPool, job: Any, req: compare.Request, registry: Registry, board: Any
) -> Any:
    return pool.call(job, req, dict(registry), board.rows())


def _remote_lines(
    pool: WorkerPool, req: compare.Request, registry: Registry, board: Any, gzipped: bool
) -> Iterator[bytes]:
    job = pool.submit(pool_jobs.compare_lines, req, dict(registry), board.rows(), gzipped)
    return job.first()


async def _streamed(
    request: Request, pairs: list[tuple[str, str]], registry: Registry
) -> StreamingResponse:
    """The comparison as lines (compare_stream), holding its slot until the last one."""
    req = compare.parse(pairs)
    board = request.app.state.fidelity
    headers = compare_stream.headers(request)
    gzipped = headers["Content-Encoding"] == "gzip"
    admit, cost = heavy(request), costs.scenarios(req.members)
    pool = admit.pool_for(cost)
    lines = (
        partial(compare_stream.lines, req, registry, board, gzipped)
        if pool is None
        else partial(_remote_lines, pool, req, registry, board, gzipped)
    )
    return await admit.stream(
        lines,
        cost=cost,
        media_type=compare_stream.NDJSON,
        headers=headers,
    )


def _banded(req: compare.Request, registry: Registry, board: Any) -> dict[str, Any]:
    return with_compare_bands(compare.compare(req, registry), board)


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter()

    @router.get(
        "/api/compare",
        tags=["compare"],
        summary="Several scenarios side by side: timelines, memory, traffic, speed, a diff",
        description=DESCRIPTION,
        responses={
            200: {
                "content": {compare_stream.NDJSON: {"schema": {"type": "string"}}},
                "description": "JSON; or, asked with `Accept: application/x-ndjson`, lines: "
                "`head`, one `member` per column as each is evaluated, then `tail`",
            },
            422: {"description": "`detail[].loc` names the scenario and field"},
            **BUSY,
        },
    )
    async def get_compare(
        request: Request,
        registry: RegistryDep,
        s: list[str] | None = Query(None, description="a scenario query, 2 to 4 times"),
        preset: str | None = Query(None, description="factory | schedules"),
    ) -> Any:
        pairs = list(request.query_params.multi_items())
        try:
            if compare_stream.wanted(request):
                return await _streamed(request, pairs, registry)
            result = await _admitted(request, pairs, frozenset(), registry, encoded=True)
        except compare.CompareError as exc:
            return _unprocessable(exc)
        if isinstance(result, bytes):
            return Response(result, media_type="application/json")
        return result

    @router.get("/compare", response_class=HTMLResponse, include_in_schema=False)
    async def compare_page(
        request: Request,
        registry: RegistryDep,
        # Declared (read from multi_items below) so app/api/query_guard.py lets it repeat.
        s: list[str] | None = Query(None, include_in_schema=False),
    ) -> HTMLResponse:
        pairs = list(request.query_params.multi_items())
        problem, result, first = None, None, {}
        try:
            req = compare.parse(pairs, PAGE_VIEW_KEYS)
            first = req.members[0].query()
            if req.preset is not None and not heavy(request).light(costs.scenarios(req.members)):
                # A big preset: the page comes at once and draws each column as its line
                # comes (compare_stream). Explicit scenarios are embedded: a refused one
                # makes the page itself a 422.
                result = {**compare.head(req), "members": None}
            else:
                result = await _admitted(request, pairs, PAGE_VIEW_KEYS, registry)
        except compare.CompareError as exc:
            problem = exc
        # The page may embed the whole comparison: rendered off the event loop.
        return await run_in_threadpool(render, request, registry, pairs, problem, result, first)

    def render(
        request: Request,
        registry: Registry,
        pairs: list[tuple[str, str]],
        problem: compare.CompareError | None,
        result: dict[str, Any] | None,
        first: dict[str, str],
    ) -> HTMLResponse:
        langs = request.app.state.i18n.langs  # the app's catalogues'
        lang_raw = request.query_params.get("lang", "en")
        lang = lang_raw if lang_raw in langs else "en"
        catalog = request.app.state.i18n
        errs = _page_errors(problem, lang, catalog)
        if lang_raw not in langs:
            err = unknown_lang(langs)
            errs["lang"] = message(
                {"type": err.type, "msg": err.message(), "ctx": err.context}, lang,
                catalog.table(lang),
            )  # fmt: skip
        base = result["base"] if result and result["base"] is not None else {}
        lang_q = [("lang", lang)] if lang != "en" else []
        data = {
            "page": "compare",
            "comparison": result if not errs else None,
            "errors": errs,
            "state": {"lang": lang},
            "defaults": controls.defaults(),
            "view_keys": sorted(PAGE_VIEW_KEYS),
            "options": _options(registry),
        }
        return respond(
            templates, request, data,
            fields=controls.scenario_fields(registry),
            values=base or {k: v for k, v in pairs if k in Scenario.model_fields},
            preset_mode=not any(k == "s" for k, _ in pairs),
            base=base,
            unknown={k: v for k, v in errs.items() if k not in Scenario.model_fields},
            query=urlencode([*first.items(), *lang_q]),
            scenario_query=urlencode(first),
            compare_query=urlencode(result["urlquery"] + lang_q if result else pairs),
        )  # fmt: skip

    return router
