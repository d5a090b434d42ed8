"""Validation errors -> HTTP 422 naming the field and the reason, safe for NaN and inf.

FastAPI's default handler echoes the rejected input; ``float('nan')`` in that echo makes
JSON encoding fail and turns a 422 into a 500. This handler never echoes raw values.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from app.core.inputs.scenario import ScenarioError


def _safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def issue(
    loc: list[Any], msg: str, kind: str = "value_error", ctx: dict[str, Any] | None = None
) -> dict[str, Any]:
    out = {"loc": [_safe(x) for x in loc], "msg": msg, "type": kind}
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


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _request_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return unprocessable(clean_errors(list(exc.errors())))

    @app.exception_handler(ValidationError)
    async def _model_invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return unprocessable(clean_errors(exc.errors(), ("query",)))

    @app.exception_handler(ScenarioError)
    async def _scenario_invalid(_: Request, exc: ScenarioError) -> JSONResponse:
        return unprocessable([issue(["query", exc.field], exc.reason)])
