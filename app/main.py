"""create_app(settings): the whole server, wired from settings, with no work at import."""

from __future__ import annotations

from fastapi import FastAPI

from app import errors
from app.api import assets, health, pages, plan, scenario, trace, views
from app.settings import Settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = FastAPI(
        title="meshscope",
        version="0.1.0",
        description="See DP x TP x PP parallelism: layout, schedules, costs and live runs.",
    )
    app.state.settings = settings
    errors.install(app)
    app.include_router(health.router)
    app.include_router(scenario.router)
    app.include_router(plan.router)
    app.include_router(views.router)
    app.include_router(trace.router)
    assets.install(app)
    app.include_router(pages.make_router())
    return app
