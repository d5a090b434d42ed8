"""create_app(settings): the whole server, wired from settings, with no work at import."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from anyio import to_thread
from fastapi import Depends, FastAPI

from app import errors, gc_policy, i18n
from app.api import (
    assets,
    body_limit,
    compare,
    compression,
    docs_offline,
    export,
    fidelity,
    hardware,
    health,
    hosts,
    ingest,
    learn,
    metrics,
    model_import,
    openapi_doc,
    page_invalid,
    pages,
    plan,
    plan_page,
    primer,
    query_guard,
    quiz,
    run_actions,
    run_import,
    run_pages,
    run_stragglers,
    runs,
    scenario,
    trace,
    trend,
    viewers,
    views,
)
from app.api.limits import HeavyLimiter
from app.api.pool import WorkerPool, pool_board
from app.api.scenario_cache import ScenarioCache, remote_body
from app.core.evaluate import evaluate
from app.live.services import Live
from app.settings import Settings


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The live side's store, hub and liveness exist only while the server runs."""
    # anyio runs sync routes in its default thread pool; its size is this loop's to set.
    to_thread.current_default_thread_limiter().total_tokens = app.state.settings.compute_threads
    # Process-wide, so only while this server runs, and put back after it.
    previous_switch = sys.getswitchinterval()
    sys.setswitchinterval(app.state.settings.gil_switch_interval_s)
    # The database's claim (app/live/db_claim.py) when `meshscope serve` took it already.
    held = getattr(app.state, "db_claim", None)
    live = Live(app.state.settings, getattr(app.state, "live_config", None), held)
    app.state.live = live
    await live.start()
    # /metrics' own registry
    app.state.metrics = metrics.Metrics(live, app.state.settings, app.state.scenario_cache)
    if app.state.pool is not None:
        app.state.pool.warm()  # the forkserver up now, not on the first heavy request
    restore_gc = gc_policy.serve()  # process-wide too (app/gc_policy.py), put back below
    try:
        yield
    finally:
        restore_gc()
        if app.state.pool is not None:
            app.state.pool.close()  # no worker outlives the server
        sys.setswitchinterval(previous_switch)
        app.state.metrics.close()
        await live.stop()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = FastAPI(
        title="meshscope",
        version="0.1.0",
        description="See DP x TP x PP parallelism: layout, schedules, costs and live runs.",
        lifespan=lifespan,
        # FastAPI's own /docs and /redoc load from a CDN; docs_offline serves them locally.
        docs_url=None,
        redoc_url=None,
        # dp=2&dp=4 is a 422 naming dp, not the last value (app/api/query_guard.py).
        dependencies=[Depends(query_guard.once_each)],
    )
    app.state.settings = settings
    # Read here, before any route exists: a bad profile file stops create_app, and the server
    # never starts half-configured (app/api/hardware.py).
    app.state.hardware = hardware.load_registry(settings.hardware_profiles)
    # The catalogues every page and its JS read (app/i18n); a bad file stops create_app too.
    app.state.i18n = i18n.load(settings.i18n_dir)
    # Made here, not in the lifespan: routes use it even when no lifespan runs (tests). After
    # the registry, which its evaluator needs: a profile's name must resolve on every route.
    # The accuracy board, computed on first use (~2 s); its evaluator adds each scenario's
    # error band before the answer is cached, so pages and /api/scenario carry the same one.
    # Heavy requests' pure work runs in these worker processes (app/api/pool.py), started on
    # demand; the board's rows are computed in one too.
    pool = app.state.pool = WorkerPool.of(settings)
    app.state.fidelity = fidelity.FidelityBoard(*pool_board(pool))
    run = partial(evaluate, hardware=app.state.hardware)
    app.state.scenario_cache = ScenarioCache(
        settings.scenario_cache_bytes, app.version, run=fidelity.banded(app.state, run),
        remote=remote_body(app.state),
    )  # fmt: skip
    # Heavy requests' admission (app/api/limits.py): made here so tests without a lifespan
    # see it too; anyio binds it to the serving loop on first use.
    app.state.heavy = HeavyLimiter(
        settings.heavy_slots, settings.heavy_queue, settings.heavy_wait_s,
        per_client=settings.heavy_client_slots, light=settings.heavy_light_cost,
        stall_s=settings.heavy_stall_s, send_timeout_s=settings.heavy_send_timeout_s,
    )  # fmt: skip
    errors.install(app, page_invalid.InvalidPage().render)  # a page link's 422 is a page
    app.include_router(health.router)
    app.include_router(hardware.router)
    app.include_router(scenario.router)
    app.include_router(export.router)
    app.include_router(model_import.router)
    app.include_router(plan.router)
    app.include_router(trend.router)
    app.include_router(primer.router)
    app.include_router(views.router)
    app.include_router(trace.router)
    app.include_router(runs.router)
    app.include_router(run_stragglers.router)
    app.include_router(run_actions.router)  # issue 25: whole-run actions in DuckDB
    app.include_router(run_import.router)  # issue 25: uploads on /runs
    app.include_router(metrics.router)
    app.include_router(ingest.router)
    app.include_router(viewers.router)
    compression.install(app)
    # Every request body capped before it is read, and read in time (app/api/body_limit.py).
    body_limit.install(app, settings.max_body_bytes, settings.header_timeout_s,
                       {run_import.PATH: settings.max_import_bytes})  # fmt: skip
    assets.install(app)
    docs_offline.install(app)
    # /openapi.json completed with what the routes alone do not say (app/api/openapi_doc.py).
    openapi_doc.install(app)
    app.include_router(compare.make_router())
    app.include_router(pages.make_router())
    app.include_router(trend.make_page_router())
    app.include_router(plan_page.make_router())
    app.include_router(fidelity.make_router())
    app.include_router(quiz.make_router())
    app.include_router(learn.make_router())
    app.include_router(primer.make_page_router())
    app.include_router(run_pages.make_router())
    # Last, so outermost: a foreign Host (DNS rebinding) is refused before any route runs.
    hosts.install(app, settings)
    return app
