"""Each query parameter at most once: a link that says ``dp=2&dp=4`` is refused with a 422
naming ``dp``, not read as whichever came last. A shared link must mean one picture, and the
one its sender saw may not be the one the last value draws.

A route's own list-typed parameters (the comparison's ``s``, given 2 to 4 times) repeat by
design and are let through; FastAPI's ``dependant`` lists them. Applied to every route by
main.py (``FastAPI(dependencies=...)``); websockets take no query parameters and are skipped.
"""

from __future__ import annotations

import types
import typing
from collections import Counter
from collections.abc import Iterator, Sequence

from fastapi.exceptions import RequestValidationError
from starlette.requests import HTTPConnection

REPEATED = "query_repeated"  # the error's type: err.query_repeated words it in each language


def once_each(conn: HTTPConnection) -> None:
    if conn.scope["type"] != "http":
        return
    counts = Counter(key for key, _ in conn.query_params.multi_items())
    repeated = [k for k, n in counts.items() if n > 1]
    if not repeated:
        return
    allowed = repeatable(conn.scope.get("route"))
    problems = [
        {"type": REPEATED, "loc": ("query", key), "ctx": {"times": counts[key]},
         "msg": f"given {counts[key]} times; give it once"}
        for key in repeated if key not in allowed
    ]  # fmt: skip
    if problems:
        raise RequestValidationError(problems)


def repeatable(route: object) -> frozenset[str]:
    """The names of ``route``'s list-typed query parameters."""
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return frozenset()
    return frozenset(
        q.alias or q.name for q in dependant.query_params if _is_list(q.field_info.annotation)
    )


def declared_only(conn: HTTPConnection) -> None:
    """A JSON route's query holds only the parameters it declares: ``/api/runs/x?stpe=3`` is
    a 422 naming ``stpe`` (routes with a query model refuse extras through the model; these
    read plain parameters, which FastAPI lets anything beside)."""
    known = declared(conn.scope.get("route"))
    unknown = [k for k in dict.fromkeys(conn.query_params.keys()) if k not in known]
    if unknown:
        raise RequestValidationError(
            [{"type": "extra_forbidden", "loc": ("query", k), "msg": "unknown parameter"}
             for k in unknown]
        )  # fmt: skip


def declared(route: object) -> frozenset[str]:
    """Every query parameter ``route`` and its dependencies declare."""
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return frozenset()
    return frozenset(q.alias or q.name for d in _flat(dependant) for q in d.query_params)


def _flat(dependant) -> Iterator:
    """``dependant`` and its dependencies', all the way down (FastAPI's Dependant tree)."""
    yield dependant
    for sub in dependant.dependencies:
        yield from _flat(sub)


def _is_list(annotation: object) -> bool:
    """list[str], list[str] | None, Optional[list[str]]: a parameter that may repeat."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_is_list(a) for a in typing.get_args(annotation))
    return isinstance(origin, type) and issubclass(origin, Sequence) and origin is not str
