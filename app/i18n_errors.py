"""Validation messages in each page language, keyed by pydantic's error ``type``.

An English page shows pydantic's own message, word for word what the JSON API says; the
English column here is that message's template, for reference and for the key's placeholders.
Other languages fill ``{name}`` from the error's ``ctx``. A type missing here, or a
ScenarioError's free-text reason, is shown as the API gave it.
"""

from __future__ import annotations

from typing import Any

ERRORS: dict[str, tuple[str, str]] = {
    "err.extra_forbidden": ("unknown parameter", "未知参数"),
    "err.missing": ("Field required", "缺少此参数"),
    "err.greater_than_equal": (
        "Input should be greater than or equal to {ge}",
        "应大于或等于 {ge}",
    ),
    "err.greater_than": ("Input should be greater than {gt}", "应大于 {gt}"),
    "err.less_than_equal": ("Input should be less than or equal to {le}", "应小于或等于 {le}"),
    "err.less_than": ("Input should be less than {lt}", "应小于 {lt}"),
    "err.int_parsing": (
        "Input should be a valid integer, unable to parse string as an integer",
        "应为整数",
    ),
    "err.int_from_float": (
        "Input should be a valid integer, got a number with a fractional part",
        "应为整数，不能有小数部分",
    ),
    "err.float_parsing": (
        "Input should be a valid number, unable to parse string as a number",
        "应为数字",
    ),
    "err.finite_number": ("Input should be a finite number", "应为有限的数"),
    "err.bool_parsing": (
        "Input should be a valid boolean, unable to interpret input",
        "应为布尔值（true 或 false）",
    ),
    "err.literal_error": ("Input should be {expected}", "应为 {expected} 之一"),
    "err.enum": ("Input should be {expected}", "应为 {expected} 之一"),
    "err.string_pattern_mismatch": (
        "String should match pattern '{pattern}'",
        "格式应符合 '{pattern}'",
    ),
    "err.or": (" or ", " 或 "),  # joins pydantic's ctx["expected"] choices
    "err.string_too_long": (
        "String should have at most {max_length} characters",
        "最多 {max_length} 个字符",
    ),
}


def message(error: dict[str, Any], lang: str, table: dict[str, str]) -> str:
    """One pydantic error in ``lang``, whose strings are ``table`` (i18n.strings(lang))."""
    fallback = str(error.get("msg", "invalid value"))
    if error.get("type") == "extra_forbidden":
        return table["err.extra_forbidden"]  # pydantic's "Extra inputs..." reads oddly in a URL
    template = table.get(f"err.{error.get('type')}")
    if lang == "en" or template is None:
        return fallback
    joiner = table.get("err.or", " or ")
    ctx = {k: _plain(v).replace(" or ", joiner) for k, v in (error.get("ctx") or {}).items()}
    try:
        return template.format(**ctx)
    except (KeyError, IndexError, ValueError):
        return fallback  # a ctx without the placeholder: pydantic's own words stay right


def _plain(value: Any) -> str:
    # pydantic's ctx["expected"] is already "'en' or 'zh'"; numbers print as given.
    return value if isinstance(value, str) else str(value)
