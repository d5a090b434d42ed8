"""/docs (Swagger UI) and /redoc with their scripts served by this server, not a CDN.

FastAPI's own pages load Swagger UI and ReDoc from jsDelivr, so on an offline cluster /docs
is blank. The same pages are built here with FastAPI's ``get_swagger_ui_html`` and
``get_redoc_html``, pointed at the copies the ``fastapi-offline`` package installs. Their URL
carries that package's version, so they are cached forever and an upgrade is a new URL.
The one URL inside those bundles that points off the server is patched out (``PATCHES``).
create_app turns FastAPI's CDN pages off (docs_url=None, redoc_url=None).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.resources
from pathlib import Path

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from app.api import compression
from app.api.assets import IMMUTABLE

# The only files served from the package: the names are the allowlist.
FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "redoc.standalone.js": "text/javascript",
    "favicon.png": "image/png",
}
# ReDoc's sidebar credit shows a logo fetched from Redocly's CDN, whatever its options say.
# Offline it fails and hides itself; pointing it at an empty inline image skips the request.
PATCHES = {
    "redoc.standalone.js": [
        (
            b'"https://cdn.redoc.ly/redoc/logo-mini.svg"',
            b"\"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>\"",
        )
    ],
}


def bundle_dir() -> Path:
    return Path(str(importlib.resources.files("fastapi_offline") / "static"))


def bundle_bytes(name: str) -> bytes:
    """One of FILES as served: the package's file with this module's patches applied."""
    body = (bundle_dir() / name).read_bytes()
    for old, new in PATCHES.get(name, []):
        body = body.replace(old, new)
    return body


def bundle_version() -> str:
    return importlib.metadata.version("fastapi-offline")


def bundle_url(version: str, name: str) -> str:
    return f"/vendor/docs-{version}/{name}"


def _root(request: Request) -> str:
    # Behind a proxy that mounts the app under a prefix, as FastAPI's own docs pages do.
    return request.scope.get("root_path", "").rstrip("/")


def install(app: FastAPI) -> None:
    """GET /docs, /redoc and their bundles. Needs ``compression.install`` first."""
    version, store = bundle_version(), app.state.gzipped
    router = APIRouter(include_in_schema=False)

    def url(request: Request, name: str) -> str:
        return _root(request) + bundle_url(version, name)

    @router.get("/docs")
    def swagger(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=_root(request) + app.openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=url(request, "swagger-ui-bundle.js"),
            swagger_css_url=url(request, "swagger-ui.css"),
            swagger_favicon_url=url(request, "favicon.png"),
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @router.get("/redoc")
    def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=_root(request) + app.openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=url(request, "redoc.standalone.js"),
            redoc_favicon_url=url(request, "favicon.png"),
            with_google_fonts=False,
        )

    @router.get("/vendor/docs-{requested}/{name}")
    def bundle(request: Request, requested: str, name: str) -> Response:
        if requested != version or name not in FILES:
            raise HTTPException(404, f"this server ships fastapi-offline {version}'s docs files")
        headers = {"Cache-Control": IMMUTABLE}
        read = functools.partial(bundle_bytes, name)
        return compression.asset(request, store, f"docs/{name}", read, FILES[name], headers)

    app.include_router(router)
