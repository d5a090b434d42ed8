"""GET /runs (the list) and GET /runs/{run} (the live page; its URL is the share link and
replays the run after it ends). Server-rendered with the run's config embedded, so the page
knows what it draws before its first fetch."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.core.protocol import MAX_STEP, RUN_NAME_PATTERN
from app.paths import asset_dir

RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]


def _json_for_script(data: Any) -> str:
    # "<" escaped so no value can close the <script> element it sits in.
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter(tags=["pages"], include_in_schema=False)

    @router.get("/runs", response_class=HTMLResponse)
    def runs_page(request: Request) -> HTMLResponse:
        rows = request.app.state.live.reader.runs()
        for row in rows:
            row.update(json.loads(row.pop("info")))
        context = {"runs": rows, "plotly_url": request.app.state.plotly_url}
        return templates.TemplateResponse(request, "runs.html", context)

    @router.get("/runs/{run}", response_class=HTMLResponse)
    def run_page(
        request: Request,
        run: RunName,
        step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
    ) -> HTMLResponse:
        row = request.app.state.live.reader.run(run)
        info = json.loads(row["info"]) if row else None
        data = {
            "run": run,
            "info": info,
            "world": row["world"] if row else None,
            "status": row["status"] if row else None,
            "step": step,
        }
        context = {
            "run": run,
            "info": info,
            "found": row is not None,
            "page_json": _json_for_script(data),
            "plotly_url": request.app.state.plotly_url,
        }
        # 200 even before the run exists: a link shared before the probe starts waits for it.
        return templates.TemplateResponse(request, "run_live.html", context)

    return router
