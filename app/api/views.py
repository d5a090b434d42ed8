"""GET /api/flow and /api/orders: each view's derived data, for the page to re-fetch.

Same query as ``/api/scenario``. The data are rules about pipelines and layouts computed in
the core (``app.core.flow``, ``app.core.orders``), so the page only draws them. They start
from the scenario's view model in the app's ScenarioCache, not from a fresh evaluate().
The flow data (38 MB for 393k actions) are made on the thread pool under a heavy-request slot
(app/api/limits.py) and streamed in pieces, so no one ``json.dumps`` holds the GIL for long.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from app.api.limits import HeavyLimiter, heavy
from app.core import flow, orders
from app.core.scenario import Scenario

router = APIRouter(tags=["views"])

ScenarioQuery = Annotated[Scenario, Query()]
Limiter = Annotated[HeavyLimiter, Depends(heavy)]
# List items per json.dumps call, and bytes gathered before a piece is sent.
ITEMS_PER_DUMP = 1_000
PIECE_BYTES = 64 * 1024
BUSY = {429: {"description": "Too many heavy requests at once; retry after `Retry-After` s"}}
INVALID = {422: {"description": "A parameter is invalid; `detail` names it and why"}}


def _dumps(value: Any) -> str:
    # JSONResponse's own encoding (starlette/responses.py: JSONResponse.render).
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def json_parts(value: Any) -> Iterator[str]:
    """``_dumps(value)`` in parts: dicts key by key, long lists ITEMS_PER_DUMP at a time."""
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + _dumps(str(key)) + ":"
            yield from json_parts(item)
        yield "}"
    elif isinstance(value, list) and len(value) > ITEMS_PER_DUMP:
        yield "["
        for i in range(0, len(value), ITEMS_PER_DUMP):
            yield ("," if i else "") + _dumps(value[i : i + ITEMS_PER_DUMP])[1:-1]
        yield "]"
    else:
        yield _dumps(value)


def json_pieces(value: Any) -> Iterator[bytes]:
    """``json_parts`` gathered into pieces of about PIECE_BYTES, each one send."""
    buf: list[str] = []
    size = 0
    for part in json_parts(value):
        buf.append(part)
        size += len(part)
        if size >= PIECE_BYTES:
            yield "".join(buf).encode()
            buf, size = [], 0
    if buf:
        yield "".join(buf).encode()


@router.get(
    "/api/flow",
    summary="PP sends, animation steps, in-flight activations and bubble so far",
    response_model=dict[str, Any],
    response_class=StreamingResponse,
    responses={**INVALID, **BUSY},
)
async def get_flow(
    scenario: ScenarioQuery, request: Request, limiter: Limiter
) -> StreamingResponse:
    cache = request.app.state.scenario_cache
    # The flow data are made (and a ScenarioError raised) before the first byte is sent.
    return await limiter.stream(
        lambda: json_pieces(flow.flow_view(cache.model(scenario))), media_type="application/json"
    )


@router.get(
    "/api/orders",
    summary="For every rank order: how many nodes one group of each axis spans",
    responses=INVALID,
)
def get_orders(scenario: ScenarioQuery, request: Request) -> dict[str, Any]:
    # Light (a layout's group spans), so it stays a plain sync route on the thread pool.
    lay = request.app.state.scenario_cache.model(scenario)["layout"]
    sizes = lay["sizes"]
    return {"orders": orders.compare(sizes["dp"], sizes["tp"], sizes["pp"], lay["gpus_per_node"])}
