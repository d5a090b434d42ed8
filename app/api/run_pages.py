"""GET /runs (the list) and GET /runs/{run} (the live page; its URL is the share link and
replays the run after it ends). Server-rendered with the run's config embedded, so the page
knows what it draws before its first fetch. A run name the store has never heard of gets a
404 page listing the known runs, which opens the live page once a probe announces the run."""

from __future__ import annotations

import hmac
import json
from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from app.api import read_access
from app.api.page_data import json_for_script
from app.api.runs import rank_states, run_verdict, whole_at
from app.core.inputs.protocol import MAX_STEP, RUN_NAME_PATTERN
from app.core.layout.topology import DEFAULT_ORDER
from app.i18n.lang import query_lang
from app.paths import asset_dir

RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]
Lang = Annotated[str, Depends(query_lang)]  # one of the app's catalogues' languages
POLL_S = 3  # how often the 404 page asks whether the run has been announced
LISTED = 50  # known runs the 404 page lists; /runs has the rest
MAX_LOGIN_BODY = 8192


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter(tags=["pages"], include_in_schema=False)

    def language(request: Request, lang: str) -> dict[str, Any]:
        catalog = request.app.state.i18n  # the templates' t() and the JS's table: one source
        return {"lang": lang, "t": catalog.translator(lang), "strings": catalog.strings(lang)}

    def config_line(info: dict[str, Any] | None, t) -> str:
        """The run's shape in words; live_page.js fills the same template when it changes."""
        if info is None:
            return ""
        chunks = t("live.chunks").format(v=info["virtual_stages"])
        return t("live.config").format_map(
            {
                **info,
                "m": info["microbatches"],
                "chunks": chunks if info["virtual_stages"] > 1 else "",
            }
        )

    def known_runs(request: Request, t, limit: int = 500) -> list[dict[str, Any]]:
        """Newest first, each row with its run config spread in (the listed columns) and
        its verdict (app.live.verdict, the one status the API gives too)."""
        live = request.app.state.live
        rows = live.reader.runs(limit)
        for row in rows:
            row["verdict"] = run_verdict(live, row, t)
            row.update(json.loads(row.pop("info")))
        return rows

    def to_login(request: Request) -> Response | None:
        """MESHSCOPE_READ_TOKEN set and not shown: off to the login page, then back."""
        if read_access.shows_token(request):
            return None
        return RedirectResponse(read_access.login_url(request), status_code=303)

    @router.get("/runs", response_class=HTMLResponse)
    def runs_page(request: Request, lang: Lang) -> Response:
        if (login := to_login(request)) is not None:
            return login
        words = language(request, lang)
        context = {
            "runs": known_runs(request, words["t"]),
            "plotly_url": request.app.state.plotly_url,
            "static_url": request.app.state.static.url,
            "page_json": json_for_script({"strings": words["strings"]}),
            # The order an import takes when dp/tp/pp are given without one (import_trace.py)
            "default_order": "-".join(DEFAULT_ORDER),
            **words,
        }
        return templates.TemplateResponse(request, "runs.html", context)

    @router.get("/runs/{run}", response_class=HTMLResponse)
    def run_page(
        request: Request,
        run: RunName,
        lang: Lang,
        step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
    ) -> Response:
        if (login := to_login(request)) is not None:
            return login
        live = request.app.state.live
        row = live.reader.run(run)
        if row is None:
            return missing_page(request, run, lang)
        info = json.loads(row["info"])
        words = language(request, lang)
        rows = live.reader.rank_rows(run)
        verdict = run_verdict(live, row, words["t"], rows, rank_states(live, row, rows))
        # Announced (a rank said hello) but no step record yet: the page says it waits.
        waiting = verdict["status"] == "waiting"
        data = {
            "run": run,
            "info": info,
            "world": row["world"],
            "whole_at": whole_at(row, rows),
            "status": row["status"],
            "verdict": verdict,
            "step": step,
            "waiting": waiting,
        }
        data["strings"] = words["strings"]
        context = {
            "run": run,
            "info": info,
            "waiting": waiting,
            "verdict": verdict,
            "config": config_line(info, words["t"]),
            "page_json": json_for_script(data),
            "plotly_url": request.app.state.plotly_url,
            "static_url": request.app.state.static.url,
            **words,
        }
        return templates.TemplateResponse(request, "run_live.html", context)

    def missing_page(request: Request, run: str, lang: str) -> HTMLResponse:
        """404, yet a page: the known runs as links, and a poll for a run about to start."""
        words = language(request, lang)
        data = {"run": run, "poll_s": POLL_S, "strings": words["strings"]}
        context = {
            "run": run,
            "runs": known_runs(request, words["t"], LISTED),
            "poll_s": POLL_S,
            "page_json": json_for_script(data),
            "plotly_url": request.app.state.plotly_url,
            "static_url": request.app.state.static.url,
            **words,
        }
        return templates.TemplateResponse(request, "run_missing.html", context, status_code=404)

    login_routes(router, templates, language)
    return router


def login_routes(router: APIRouter, templates: Jinja2Templates, language) -> None:
    """GET /login: a one-field form; POST /login: the read token in, the cookie out."""

    def form(request: Request, lang: str, target: str, wrong: bool) -> HTMLResponse:
        words = language(request, lang)
        context = {
            "next": read_access.safe_next(target),
            "wrong": wrong,
            "page_json": json_for_script({"strings": {}}),
            "plotly_url": "",
            "static_url": request.app.state.static.url,
            **words,
        }
        status = 401 if wrong else 200
        return templates.TemplateResponse(request, "login.html", context, status_code=status)

    @router.get(read_access.LOGIN, response_class=HTMLResponse)
    def login_page(request: Request, lang: Lang, next: str = "/runs") -> HTMLResponse:  # noqa: A002
        return form(request, lang, next[:2048], wrong=False)

    @router.post(read_access.LOGIN)
    async def login(request: Request, lang: Lang) -> Response:
        body = await read_form(request)
        token = request.app.state.settings.read_token
        given = body.get("token", "")
        target = read_access.safe_next(body.get("next"))
        if token is None or not hmac.compare_digest(given.encode(), token.encode()):
            return form(request, lang, target, wrong=token is not None)
        reply = RedirectResponse(target, status_code=303)
        reply.set_cookie(
            read_access.COOKIE,
            read_access.cookie_value(token),
            max_age=read_access.COOKIE_MAX_AGE_S,
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return reply


async def read_form(request: Request) -> dict[str, str]:
    """The login form's fields (urlencoded; python-multipart is not a dependency), capped."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_LOGIN_BODY:
            break  # a token and a path: anything larger is not our form
    try:
        fields = parse_qs(body[:MAX_LOGIN_BODY].decode("utf-8", "replace"), max_num_fields=4)
    except ValueError:  # more fields than the form has
        return {}
    return {key: values[0] for key, values in fields.items()}
