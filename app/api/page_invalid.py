"""A page link with a bad parameter answers a 422 *page*, not JSON: ``/runs/x?step=abc`` or
``/flow?dp=2&dp=4`` opened in a browser showed the API's JSON error. The page names each
parameter and the reason in the link's language, and offers the link without them.

Only for a browser's page request: a GET that accepts text/html, on a route that is a page
(left out of /openapi.json). The API and every other client keep the JSON 422 of
app/errors.py, which calls ``render`` first.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates

from app.api.page_data import json_for_script
from app.i18n.errors import message
from app.paths import asset_dir


class InvalidPage:
    def __init__(self) -> None:
        self.templates = Jinja2Templates(directory=asset_dir("templates"))

    def render(self, request: Request, details: list[dict[str, Any]]) -> Response | None:
        """The 422 page of ``details`` (app/errors.py's cleaned problems), or None when the
        request is not a browser's page request."""
        if not wants_page(request):
            return None
        catalog = request.app.state.i18n
        lang = page_lang(request, catalog.langs)
        table = catalog.table(lang)
        problems = [(field_name(d["loc"]), message(d, lang, table)) for d in details]
        context = {
            "problems": problems,
            "retry": retry_url(request, details, lang),
            # The header marks the run list current only on a run page's link.
            "section": "runs" if request.url.path.startswith("/runs") else "",
            "lang": lang,
            "t": catalog.translator(lang),
            "page_json": json_for_script({"strings": {}}),
            "plotly_url": "",
            "static_url": request.app.state.static.url,
        }
        return self.templates.TemplateResponse(request, "invalid.html", context, status_code=422)


def wants_page(request: Request) -> bool:
    route = request.scope.get("route")
    return (
        request.method == "GET"
        and route is not None
        and getattr(route, "include_in_schema", True) is False
        and "text/html" in request.headers.get("accept", "")
    )


def page_lang(request: Request, langs: tuple[str, ...]) -> str:
    """The link's ?lang= when it names a catalogue (its first value, should it repeat)."""
    given = request.query_params.getlist("lang")
    return given[0] if given and given[0] in langs else "en"


def field_name(loc: list[Any]) -> str:
    return ".".join(str(x) for x in loc[1:]) or str(loc[0])


def retry_url(request: Request, details: list[dict[str, Any]], lang: str) -> str:
    """The same page without the refused query parameters; the run list (in ``lang``) when a
    path part (the run's name) was refused."""
    if any(d["loc"][:1] == ["path"] for d in details):
        return "/runs" + ("" if lang == "en" else f"?lang={lang}")
    bad = {str(d["loc"][1]) for d in details if len(d["loc"]) > 1 and d["loc"][0] == "query"}
    kept = [(k, v) for k, v in request.query_params.multi_items() if k not in bad]
    return request.url.path + (f"?{urlencode(kept)}" if kept else "")
