"""A page language checked against the catalogues present, not a fixed Literal.

``Lang`` is a model field: validated with ``context=catalog.context`` it accepts that
catalogue's languages (an app built with another catalogue folder), without a context the
shipped ones. ``query_lang`` is the same check as a FastAPI dependency for routes that take
``?lang=`` as a plain query parameter. An unknown language is the ``literal_error`` a
``Literal["en", "zh"]`` gave, so pages translate it and the JSON 422 reads as before.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, ValidationInfo, WithJsonSchema

from app.i18n import catalog
from app.i18n.errors import unknown_lang


def known(value: str, info: ValidationInfo) -> str:
    langs = (info.context or {}).get("langs") or catalog.default().langs
    if value not in langs:
        raise unknown_lang(tuple(langs))
    return value


Lang = Annotated[
    str,
    AfterValidator(known),
    WithJsonSchema({"type": "string", "description": "page language, e.g. en or zh"}),
]


def query_lang(
    request: Request, lang: Annotated[str, Query(description="page language")] = "en"
) -> str:
    """``?lang=`` in one of the app's catalogues' languages; else a 422 naming ``lang``."""
    return checked(lang, request.app.state.i18n.langs)


def checked(lang: str, langs: tuple[str, ...]) -> str:
    """``lang`` when ``langs`` (the app catalogue's) has it; else the 422 ``query_lang`` gives.
    For a route whose core model takes any well-formed code (the self-test's QuizQuery)."""
    if lang in langs:
        return lang
    err = unknown_lang(langs)
    detail = {"type": err.type, "loc": ("query", "lang"), "msg": err.message(), "ctx": err.context}
    raise RequestValidationError([detail])
