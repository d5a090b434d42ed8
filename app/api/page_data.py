"""What every server-rendered page shares: its state embedded as JSON that cannot break out
of the <script> element, and validation errors keyed by the field a user should change."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from app import i18n
from app.api import page_stream
from app.api.json_chunks import json_parts
from app.core.support.echo import echo
from app.errors import bounded, detail_of
from app.i18n.errors import message

# Stands for the view model in the page's JSON until its cached bytes take its place.
_MODEL_MARK = "\u0000meshscope-view-model\u0000"


def json_for_script(data: Any) -> str:
    """The page's state as JSON that cannot close the <script> element it is embedded in
    ("<" escaped). A big view model (scenario_cache.ViewModel) goes in as the cache's own
    bytes, the API's answer, not encoded again; anything else big is encoded in pieces
    (json_chunks), so no one call holds the GIL for the whole page."""
    before, raw, after = script_parts(data)
    if raw is None:
        return before
    return before + _script_safe(raw.decode()) + after


def script_parts(data: Any) -> tuple[str, bytes | None, str]:
    """json_for_script's text as (before, the model's raw bytes, after), the two ends script
    safe and the bytes not yet escaped; (all of it, None, "") without a big model."""
    model = data.get("model") if isinstance(data, dict) else None
    raw = getattr(model, "raw", None)
    if raw is None:
        return _script_safe("".join(json_parts(data))), None, ""
    head = _script_safe("".join(json_parts({**data, "model": _MODEL_MARK})))
    # The mark is the first string after "page"'s fixed name, and no user text reaches a page
    # that has a model (its errors leave the model out), so the first match is the model's.
    before, _, after = head.partition(json.dumps(_MODEL_MARK))
    return before, raw.encode() if isinstance(raw, str) else bytes(raw), after


def _script_safe(text: str) -> str:
    return text.replace("<", "\\u003c")


def field_of(loc: tuple | list) -> str:
    parts = [str(p) for p in loc if p not in ("query", "__root__")]
    # An unknown parameter's name is the user's: cut, as errors.issue cuts it in a 422.
    return str(echo(parts[0], quote=False)) if parts else "query"


def reason_text(exc: Exception, lang: str = "en", catalog: i18n.Catalog | None = None) -> str:
    """A core error naming one field (ScenarioError, QuizError) in the page's language: its
    message key's template from the catalogue, else (or in English) its English reason."""
    catalog = catalog or i18n.default()
    lang = lang if lang in catalog.langs else "en"
    return message(detail_of(exc), lang, catalog.table(lang))


def errors_by_field(
    exc: ValidationError, lang: str = "en", catalog: i18n.Catalog | None = None
) -> dict[str, str]:
    """The first problem of each field, in the page's language (from the app's catalogue,
    else the shipped one); an unknown key says so in plain words."""
    catalog = catalog or i18n.default()
    lang = lang if lang in catalog.langs else "en"
    table = catalog.table(lang)
    out: dict[str, str] = {}
    for e in exc.errors():
        out.setdefault(field_of(e.get("loc", ())), message(e, lang, table))
    return out


def respond(
    templates: Jinja2Templates, request: Request, data: dict[str, Any], **context: Any
) -> Response:
    """A page: data["page"]'s template in data["state"]["lang"], with the page's strings and
    state embedded for its script, and status 422 whenever data["errors"] is not empty."""
    # Every message bounded: a route's own f-string may quote a long input whole.
    data["errors"] = {k: bounded(v) for k, v in data["errors"].items()}
    if "unknown" in context:
        context["unknown"] = {k: bounded(v) for k, v in context["unknown"].items()}
    lang, errors = data["state"]["lang"], data["errors"]
    catalog = request.app.state.i18n  # the templates' t() and the JS's table: one catalogue
    data["strings"] = catalog.strings(lang)
    before, raw, after = script_parts(data)
    big = raw is not None and len(raw) >= page_stream.SLICE_BYTES
    full = {
        "page": data["page"],
        "lang": lang,
        "t": catalog.translator(lang),
        "state": data["state"],
        "errors": errors,
        "page_json": page_stream.PAGE_MARK if big else json_for_script(data),
        "plotly_url": request.app.state.plotly_url,
        "static_url": request.app.state.static.url,
        **context,
    }
    page = templates.TemplateResponse(
        request, f"{data['page']}.html", full, status_code=422 if errors else 200,
        media_type="text/html",
    )  # fmt: skip
    return page_stream.streamed(page, before, raw, after) if big and raw is not None else page
