"""GET /api/trace: the scenario's simulated timeline as Chrome trace JSON (open in Perfetto).

The heaviest answer the server gives (190 MB for 393k actions), so it is streamed: the view
model is computed under one of the app's heavy-request slots (app/api/limits.py), in a
worker process when it is not light (app/api/pool.py), then the trace is written out in
pieces of events (``chrome_trace.chunks``), never as one string. An invalid scenario is
still a 422: the view model, which is where a ScenarioError comes from, exists before the
first byte is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from app.api import costs, pool_jobs
from app.api.hardware import Registry, RegistryDep
from app.api.limits import Admission, heavy
from app.api.pool import WorkerPool
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.views import chrome_trace

router = APIRouter(tags=["trace"])

ScenarioQuery = Annotated[Scenario, Query()]


def trace_chunks(scenario: Scenario, registry: Registry) -> Iterator[bytes]:
    """Evaluate now (raising ScenarioError as evaluate does); the trace's bytes lazily."""
    return chrome_trace.chunks(evaluate(scenario, registry))


def _remote(pool: WorkerPool, scenario: Scenario, registry: Registry) -> Iterator[bytes]:
    return pool.submit(pool_jobs.trace_chunks, scenario, dict(registry)).first()


@router.get(
    "/api/trace",
    summary="Chrome trace-event JSON: one process per pipeline rank, flows from send to recv",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/json": {}}},
        422: {"description": "A parameter is invalid; `detail` names it and why"},
        429: {"description": "Too many heavy requests at once; retry after `Retry-After` s"},
    },
)
async def get_trace(
    scenario: ScenarioQuery,
    registry: RegistryDep,
    limiter: Annotated[Admission, Depends(heavy)],
) -> StreamingResponse:
    name = f"meshscope-{scenario.schedule.value}-pp{scenario.pp}-m{scenario.microbatches}.json"
    cost = costs.scenario(scenario)
    pool = limiter.pool_for(cost)
    # A big one is made in a worker process (app/api/pool.py) and streamed from it as made.
    prepare = (
        partial(trace_chunks, scenario, registry)
        if pool is None
        else partial(_remote, pool, scenario, registry)
    )
    return await limiter.stream(
        prepare,
        cost=cost,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
