"""What the fidelity data files' loaders share (published_runs.json, published_memory.json):
the error that names the row and field at fault, JSON parsing, and the checks of an object's
keys and of one value against its annotated type."""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from typing import Any


class DataError(ValueError):
    """A malformed data file. ``where`` names the row ("runs[3] 'id'"), ``field`` the key at
    fault (``model.hidden`` for a nested one)."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        super().__init__(f"{where}, field {field!r}: {problem}")
        self.where, self.field = where, field


def read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError("the file", "-", f"not JSON: {exc}") from exc


def check_keys(
    where: str, raw: Any, allowed: Sequence[str], required: Sequence[str], prefix: str = ""
) -> None:
    """``raw`` is an object with no key outside ``allowed`` and every key of ``required``."""
    if not isinstance(raw, dict):
        got = type(raw).__name__
        raise DataError(where, prefix.rstrip(".") or "-", f"expected an object, got {got}")
    unknown = [k for k in raw if k not in allowed]
    if unknown:
        raise DataError(where, prefix + unknown[0], "unknown key")
    missing = [k for k in required if k not in raw]
    if missing:
        raise DataError(where, prefix + missing[0], "required key is missing")


def check_type(where: str, name: str, value: Any, hint: Any) -> None:
    """``value`` is one of the types ``hint`` allows (a union, or one type)."""
    allowed = typing.get_args(hint) or (hint,)
    if not type_ok(value, allowed):
        wanted = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
        got = "null" if value is None else f"{type(value).__name__} {value!r:.60}"
        raise DataError(where, name, f"expected {wanted}, got {got}")


def type_ok(value: Any, allowed: tuple[Any, ...]) -> bool:
    if value is None:
        return type(None) in allowed
    if type(value) is int:  # JSON writes 137.0 as 137; a bool is never a number
        return int in allowed or float in allowed
    return type(value) in allowed
