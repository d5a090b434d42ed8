"""Validation messages in each page language, keyed by pydantic's error ``type``.

The ``errors`` group of each catalogue holds ``err.<type>`` templates. An English page shows
pydantic's own message, word for word what the JSON API says; the English template is that
message's, for reference and for the key's placeholders. Other languages fill ``{name}`` from
the error's ``ctx``. The core's own errors (ScenarioError, QuizError, a compare issue) carry a
message key and params: their 422 detail's ``type`` is the key and its ``ctx`` the params, so
they are worded the same way (``err.<key>``, whose English text is the core's template). A
type missing there, or a reason without a key, is shown as the API gave it.
``static/js/i18n.js:errorText`` words a 422 detail the same way.

A quoted input cut to its first characters (``app.core.support.echo.Echo``) is worded with
``err.echo.cut`` in the page's language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError

from app.core.support.echo import Echo


def message(error: dict[str, Any], lang: str, table: Mapping[str, str]) -> str:
    """One pydantic error in ``lang``, whose strings are ``table`` (i18n.strings(lang))."""
    fallback = str(error.get("msg", "invalid value"))
    if error.get("type") == "extra_forbidden":
        return table["err.extra_forbidden"]  # pydantic's "Extra inputs..." reads oddly in a URL
    template = table.get(f"err.{error.get('type')}")
    if lang == "en" or template is None:
        return fallback
    joiner = table.get("err.or", " or ")
    ctx = {k: _param(v, joiner, table) for k, v in (error.get("ctx") or {}).items()}
    try:
        return template.format(**ctx)
    except (KeyError, IndexError, ValueError):
        return fallback  # a ctx without the placeholder: pydantic's own words stay right


def unknown_lang(langs: tuple[str, ...]) -> PydanticCustomError:
    """The error a ``Literal`` of ``langs`` would raise, so every page words it alike."""
    quoted = [repr(lang) for lang in langs]
    expected = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return PydanticCustomError(
        "literal_error", "Input should be {expected}", {"expected": expected}
    )


def _param(value: Any, joiner: str, table: Mapping[str, str]) -> str:
    if isinstance(value, Echo):  # a user's input, quoted: never reworded
        cut = table.get("err.echo.cut")
        if value.length is None or cut is None:
            return str(value)
        return cut.format(head=value.head, length=f"{value.length:,}")
    return _plain(value).replace(" or ", joiner)


def _plain(value: Any) -> str:
    # pydantic's ctx["expected"] is already "'en' or 'zh'"; numbers print as given.
    return value if isinstance(value, str) else str(value)
