"""Validation errors -> HTTP 422 naming the field and the reason, safe for NaN and inf.

FastAPI's default handler echoes the rejected input; ``float('nan')`` in that echo makes
JSON encoding fail and turns a 422 into a 500. This handler never echoes raw values, and a
parameter name in ``loc`` is cut to ECHO_LIMIT characters (an unknown 10 kB name is not
sent back whole). A core error with a message key (ScenarioError, QuizError) is a detail
whose ``type`` is the key and whose ``ctx`` its params, so a page words it in its language.

``Error`` is every error answer's body as /openapi.json states it, and ``responses(...)`` the
``responses=`` a route declares for the statuses it can return, so a client generated from
the document meets no undocumented status (issue 26, item 15).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from app.core.inputs.scenario import ScenarioError
from app.core.support.echo import ECHO_LIMIT, echo


class ErrorDetail(BaseModel):
    """One problem: ``loc`` the request part then the field, ``msg`` in English, ``type``
    pydantic's kind or a catalogue key (``ctx`` its parameters) a page words in its language."""

    loc: list[str | int]
    msg: str
    type: str
    ctx: dict[str, Any] | None = None


class Error(BaseModel):
    """An error answer: one sentence, or (422) every problem found."""

    detail: str | list[ErrorDetail]


PageRenderer = Callable[[Request, list[dict[str, Any]]], Response | None]

# What each error status means on this server, wherever a route can return it.
WHY = {
    400: "The Host header is not one this server answers for (app/api/hosts.py)",
    401: "MESHSCOPE_READ_TOKEN is set and none was shown",
    404: "No such run, or no such step of it",
    408: "The request body did not arrive in time",
    413: "The request body is over the server's size limit",
    422: "A parameter is invalid, unknown or given twice; `detail[].loc` names it and `msg` "
    "says why",
    429: "Too many heavy requests at once; retry after `Retry-After` s",
}


def responses(*codes: int, why: Mapping[int, str] | None = None) -> dict[int | str, Any]:
    """``responses=`` for a route that can answer ``codes``: each with the Error body and
    its meaning (``why`` overrides one route's wording)."""
    said = {**WHY, **(why or {})}
    return {code: {"model": Error, "description": said[code]} for code in codes}


def _safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _name(value: Any) -> Any:
    """A ``loc`` part: a parameter name the user typed is cut past ECHO_LIMIT characters."""
    value = _safe(value)
    return str(echo(value, quote=False)) if isinstance(value, str) else value


# A message whose code quoted an input without app.core.support.echo (e.g. a route's own
# f-string) still must not send it back whole: a run of more non-space characters than any
# quote echo() makes (ECHO_LIMIT characters, each at most 4 as repr escapes) is cut.
_RUN = 4 * ECHO_LIMIT + 10
LONG_RUN = re.compile(rf"'([^'\s]{{{_RUN},}})'|\S{{{_RUN},}}")


def bounded(text: str) -> str:
    """``text`` with every overlong run of non-space characters (or a quoted one) cut as
    echo() cuts it."""
    return LONG_RUN.sub(
        lambda m: str(echo(m.group(1)) if m.group(1) else echo(m.group(0), quote=False)), text
    )


def detail_of(exc: Exception, prefix: tuple[str, ...] = ("query",)) -> dict[str, Any]:
    """A core error that names one field (``field``, English ``reason``, and optionally a
    message ``key`` with ``params``) as a pydantic-style error detail."""
    key = getattr(exc, "key", None)
    detail = {"loc": [*prefix, exc.field], "msg": exc.reason, "type": key or "value_error"}
    if key and getattr(exc, "params", None):
        detail["ctx"] = dict(exc.params)
    return detail


def issue(
    loc: list[Any], msg: str, kind: str = "value_error", ctx: dict[str, Any] | None = None
) -> dict[str, Any]:
    out = {"loc": [_name(x) for x in loc], "msg": bounded(msg), "type": kind}
    if ctx:
        # The bound or the choices, so a page can say the reason in its own language.
        out["ctx"] = {str(k): _safe(v) for k, v in ctx.items()}
    return out


def clean_errors(errors: list[dict[str, Any]], prefix: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for e in errors:
        loc = list(prefix) + [x for x in e.get("loc", ()) if x != "__root__"]
        msg, kind = str(e.get("msg", "invalid value")), str(e.get("type", "value_error"))
        out.append(issue(loc, msg, kind, e.get("ctx")))
    return out


def unprocessable(details: list[dict[str, Any]]) -> JSONResponse:
    return JSONResponse(status_code=422, content={"detail": details})


def refused(exc: Exception) -> JSONResponse:
    """The 422 of a core error naming one field (see ``detail_of``)."""
    d = detail_of(exc)
    return unprocessable([issue(d["loc"], d["msg"], d["type"], d.get("ctx"))])


def install(app: FastAPI, page: PageRenderer | None = None) -> None:
    """The handlers; ``page`` answers a browser's page link with a 422 page instead of JSON
    when it returns a response (app/api/page_invalid.py)."""

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Request, exc: RequestValidationError) -> Response:
        details = clean_errors(list(exc.errors()))
        shown = page(request, details) if page is not None else None
        return shown if shown is not None else unprocessable(details)

    @app.exception_handler(ValidationError)
    async def _model_invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return unprocessable(clean_errors(exc.errors(), ("query",)))

    @app.exception_handler(ScenarioError)
    async def _scenario_invalid(_: Request, exc: ScenarioError) -> JSONResponse:
        return refused(exc)
