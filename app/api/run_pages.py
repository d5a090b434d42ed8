"""GET /runs (the list) and GET /runs/{run} (the live page; its URL is the share link and
replays the run after it ends). Server-rendered with the run's config embedded, so the page
knows what it draws before its first fetch."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app import i18n
from app.api.page_data import json_for_script
from app.core.protocol import MAX_STEP, RUN_NAME_PATTERN
from app.paths import asset_dir

RunName = Annotated[str, Path(pattern=RUN_NAME_PATTERN, max_length=64)]
Lang = Annotated[Literal["en", "zh"], Query(description="page language")]


def make_router() -> APIRouter:
    templates = Jinja2Templates(directory=asset_dir("templates"))
    router = APIRouter(tags=["pages"], include_in_schema=False)

    def language(lang: str) -> dict[str, Any]:
        return {"lang": lang, "t": i18n.translator(lang), "strings": i18n.strings(lang)}

    def config_line(info: dict[str, Any] | None, lang: str) -> str:
        """The run's shape in words; live_page.js fills the same template when it changes."""
        if info is None:
            return ""
        t = i18n.translator(lang)
        chunks = t("live.chunks").format(v=info["virtual_stages"])
        return t("live.config").format_map(
            {
                **info,
                "m": info["microbatches"],
                "chunks": chunks if info["virtual_stages"] > 1 else "",
            }
        )

    @router.get("/runs", response_class=HTMLResponse)
    def runs_page(request: Request, lang: Lang = "en") -> HTMLResponse:
        rows = request.app.state.live.reader.runs()
        for row in rows:
            row.update(json.loads(row.pop("info")))
        words = language(lang)
        context = {
            "runs": rows,
            "plotly_url": request.app.state.plotly_url,
            "page_json": json_for_script({"strings": words["strings"]}),
            **words,
        }
        return templates.TemplateResponse(request, "runs.html", context)

    @router.get("/runs/{run}", response_class=HTMLResponse)
    def run_page(
        request: Request,
        run: RunName,
        step: Annotated[int | None, Query(ge=0, le=MAX_STEP)] = None,
        lang: Lang = "en",
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
        words = language(lang)
        data["strings"] = words["strings"]
        context = {
            "run": run,
            "info": info,
            "found": row is not None,
            "config": config_line(info, lang),
            "page_json": json_for_script(data),
            "plotly_url": request.app.state.plotly_url,
            **words,
        }
        # 200 even before the run exists: a link shared before the probe starts waits for it.
        return templates.TemplateResponse(request, "run_live.html", context)

    return router
