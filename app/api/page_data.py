"""What every server-rendered page shares: its state embedded as JSON that cannot break out
of the <script> element, and validation errors keyed by the field a user should change."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError


def json_for_script(data: Any) -> str:
    # "<" escaped so no value can close the <script> element it is embedded in.
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def field_of(loc: tuple | list) -> str:
    parts = [str(p) for p in loc if p not in ("query", "__root__")]
    return parts[0] if parts else "query"


def errors_by_field(exc: ValidationError) -> dict[str, str]:
    """The first problem of each field; an unknown key says so in plain words."""
    out: dict[str, str] = {}
    for e in exc.errors():
        msg = str(e.get("msg", "invalid value"))
        if e.get("type") == "extra_forbidden":
            msg = "unknown parameter"
        out.setdefault(field_of(e.get("loc", ())), msg)
    return out
