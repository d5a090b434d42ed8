"""/openapi.json says what the server does (issue 26, item 15).

FastAPI writes the document from the routes' signatures. Three things it cannot see are
added here, once, when the document is first asked for:

* the rules core validators enforce beyond pydantic's field bounds, as JSON Schema: the
  shapes of the comma lists (``stage_layers``, ``f_time``...), and the names that must
  exist (models, this server's hardware registry, orders, languages, quiz questions),
  each computed from the same tables the validators read, so the two cannot drift;
* statuses the middlewares answer before any route runs: 400 for a foreign Host
  (app/api/hosts.py) everywhere, 408 and 413 for bodies (app/api/body_limit.py); and 422
  everywhere, for a query parameter given twice (app/api/query_guard.py);
* the Error body (app/errors.py) on every 4xx a route declares without one.

Rules between two fields (dp*tp*pp within the world bound, a list as long as pp...) have
no JSON Schema form; they stay 422s that name the field, documented by each 422.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import permutations
from typing import Any

from fastapi import FastAPI

from app.core.evaluate.compare import PRESETS as COMPARE_PRESETS
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import CUSTOM_MODEL
from app.core.inputs.scenario_fields import MAX_LAYERS, MAX_TIME, TIME_LOW
from app.core.layout.topology import ORDER_PRESETS, parse_order
from app.core.teach.quiz import BY_ID, LETTERS
from app.errors import WHY, Error

REF = {"$ref": "#/components/schemas/Error"}
JSON_ERROR = {"application/json": {"schema": REF}}
# Axis names an order may spell (app/core/layout): the enum keeps those parse_order takes.
AXIS_NAMES = ("dp", "pp", "tp", "cp", "ep")
# One entry of stage_layers: a whole number 1..1024 (scenario_fields.parse_layer_list).
LAYER_ENTRY = r"(?:[1-9][0-9]{0,2}|10[01][0-9]|102[0-4])"
# One entry of a time list, 0..999999.999999 (scenario_fields.parse_time_list: low..MAX_TIME);
# the positive one (f_time's low of 1e-6) has a non-zero digit within six decimals.
TIME_ENTRY = r"(?:[0-9]{1,6}(?:\.[0-9]{1,6})?)"
POSITIVE_TIME_ENTRY = r"(?:0*[1-9][0-9]{0,5}(?:\.[0-9]{1,6})?|0?\.[0-9]{0,5}[1-9])"


def _list(entry: str, most: int) -> str:
    return rf"^{entry}(?:,{entry}){{0,{most - 1}}}$"


def orders() -> list[str]:
    """Every order parse_order takes: its presets and the axis permutations it accepts."""
    out = list(ORDER_PRESETS)
    for n in range(1, len(AXIS_NAMES) + 1):
        for axes in permutations(AXIS_NAMES, n):
            text = "-".join(axes)
            try:
                parse_order(text)
            except ValueError:
                continue
            out.append(text)
    return out


def time_schema(low: float) -> dict[str, Any]:
    entry = POSITIVE_TIME_ENTRY if low > 0 else TIME_ENTRY
    return {
        "anyOf": [
            {"type": "string", "pattern": _list(entry, MAX_LAYERS)},
            {"type": "number", "minimum": low, "maximum": MAX_TIME},
            {"type": "null"},
        ]
    }


def quiz_lists() -> dict[str, str]:
    """``only`` and ``answers`` as the questions that exist: numbers and their choices."""
    ids = "|".join(str(q) for q in sorted(BY_ID, reverse=True))
    picks = "|".join(
        f"{q.id}{LETTERS[c]}" for q in sorted(BY_ID.values(), key=lambda q: -q.id)
        for c in range(q.choices)
    )  # fmt: skip
    return {
        "only": rf"^((?:{ids})(?:,(?:{ids}))*)?$",
        "answers": rf"^((?:{picks})(?:,(?:{picks}))*)?$",
    }


def parameter_rules(app: FastAPI) -> dict[str, dict[str, Any]]:
    """Parameter name -> the schema that says what its validator takes (every route)."""
    quiz = quiz_lists()
    rules: dict[str, dict[str, Any]] = {
        "stage_layers": {
            "anyOf": [
                {"type": "string", "pattern": _list(LAYER_ENTRY, MAX_LAYERS)},
                {"type": "null"},
            ]
        },  # fmt: skip
        "order": {"type": "string", "enum": orders()},
        "model": {"type": "string", "enum": [*MODELS, CUSTOM_MODEL]},
        "hardware": {"type": "string", "enum": list(app.state.hardware)},
        "lang": {"type": "string", "enum": list(app.state.i18n.langs)},
        "only": {"type": "string", "pattern": quiz["only"]},
        "answers": {"type": "string", "pattern": quiz["answers"]},
        "preset": {"anyOf": [{"type": "string", "enum": list(COMPARE_PRESETS)}, {"type": "null"}]},
        "s": {
            "anyOf": [
                {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4},
                {"type": "null"},
            ]
        },  # fmt: skip
    }
    rules |= {name: time_schema(low) for name, low in TIME_LOW}
    return rules


# Per route, where a name means less than elsewhere: the planner searches presets only.
ROUTE_RULES = {("/api/plan", "model"): {"type": "string", "enum": list(MODELS)}}


def _operations(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                yield path, op


def _keep_words(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new``'s constraints with ``old``'s title, description and default."""
    words = {k: old[k] for k in ("title", "description", "default") if k in old}
    return {**new, **words}


def _statuses(op: dict[str, Any]) -> None:
    said = op.setdefault("responses", {})
    # 422 on every route: a query parameter given twice is refused wherever it comes
    # (app/api/query_guard.py), and the JSON routes refuse one they do not declare.
    codes = [400, 422]
    if "requestBody" in op:
        codes += [408, 413]
    for code in codes:
        said.setdefault(str(code), {"description": WHY[code]})
    for code, answer in said.items():
        if code.startswith("4") and not answer.get("content"):
            answer["content"] = JSON_ERROR


def complete(doc: dict[str, Any], app: FastAPI) -> dict[str, Any]:
    """The document FastAPI wrote, with the rules, statuses and bodies above added."""
    rules = parameter_rules(app)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    error = Error.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error.pop("$defs", {}))
    schemas.setdefault("Error", error)
    for path, op in _operations(doc):
        for param in op.get("parameters", []):
            rule = ROUTE_RULES.get((path, param["name"])) or rules.get(param["name"])
            if rule is not None and param.get("in") == "query":
                param["schema"] = _keep_words(param.get("schema", {}), rule)
        _statuses(op)
    return doc


def install(app: FastAPI) -> None:
    """Serve the completed document at /openapi.json (and to /docs), built once."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(FastAPI.openapi(app), app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
