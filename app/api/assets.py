"""Static files and the vendored Plotly, served by this server only: no CDN, works offline.

Plotly comes from the installed ``plotly`` package (``plotly/package_data/plotly.min.js``)
at a URL carrying its version, so browsers may cache it forever and an upgrade is a new URL.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from app.paths import asset_dir

IMMUTABLE = "public, max-age=31536000, immutable"


def plotly_js_path() -> Path:
    """The bundled plotly.min.js as a real file (wheels install package data unzipped)."""
    return Path(str(importlib.resources.files("plotly") / "package_data" / "plotly.min.js"))


def plotly_js_version() -> str:
    # The bundle's own version (plotly.js), not the Python package's: the file is what we serve.
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


def plotly_url(version: str) -> str:
    return f"/vendor/plotly-{version}.min.js"


def install(app: FastAPI) -> None:
    """Mount /static and the versioned Plotly route; record Plotly's URL for the templates."""
    version = plotly_js_version()
    app.state.plotly_url = plotly_url(version)
    app.mount("/static", StaticFiles(directory=asset_dir("static")), name="static")
    router = APIRouter(tags=["assets"], include_in_schema=False)

    @router.get("/vendor/plotly-{requested}.min.js")
    def plotly_js(requested: str) -> FileResponse:
        if requested != version:
            raise HTTPException(404, f"this server ships plotly.js {version}")
        return FileResponse(
            plotly_js_path(),
            media_type="text/javascript",
            headers={"Cache-Control": IMMUTABLE},
        )

    app.include_router(router)
