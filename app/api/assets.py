"""Static files and the vendored Plotly, served by this server only: no CDN, works offline.

Our files are served at ``/static/<tree hash>/<path>``. The hash covers every static file's
path and bytes, so any change is a new URL and browsers may keep each response forever. One
prefix for the whole tree, not one hash per file, because the ES modules import each other by
relative path (``./fmt.js``): those imports resolve under the same prefix with no rewriting.
The bytes served are the bytes hashed (read once, at startup), so a hashed URL never answers
with other content; a stale hash is a 404. The bare ``/static/<path>`` still answers, for old
pages and hand-typed URLs, but must be revalidated on every use.

Plotly comes from the installed ``plotly`` package (``plotly/package_data/plotly.min.js``)
at a URL carrying its version, so browsers may cache it forever and an upgrade is a new URL.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import Response

from app.api import compression
from app.paths import asset_dir

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
HASH_CHARS = 12
# Explicit, not mimetypes': module scripts must be served as JavaScript on every platform.
MEDIA_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".woff2": "font/woff2",  # already compressed: compression.py's textual test skips it
    ".txt": "text/plain; charset=utf-8",
}


def media_type(name: str) -> str:
    suffix = PurePosixPath(name).suffix
    return MEDIA_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def read_tree(directory: Path) -> dict[str, bytes]:
    """Every file under directory by its relative POSIX path; hidden files and caches left out."""
    files = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            files[rel.as_posix()] = path.read_bytes()
    return files


def tree_hash(files: Mapping[str, bytes]) -> str:
    """A short sha256 over every path and its bytes; lengths keep the fields apart."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        name, body = rel.encode(), files[rel]
        digest.update(b"%d:%s%d:" % (len(name), name, len(body)))
        digest.update(body)
    return digest.hexdigest()[:HASH_CHARS]


@dataclass(frozen=True)
class StaticTree:
    """Our static files as read at startup, and the hash that names this version of them."""

    files: Mapping[str, bytes]
    digest: str

    @classmethod
    def load(cls, directory: Path) -> StaticTree:
        files = read_tree(directory)
        return cls(files, tree_hash(files))

    @property
    def prefix(self) -> str:
        return f"/static/{self.digest}"

    def url(self, rel: str) -> str:
        """The hashed URL of one file; a name we do not ship fails the page render, loudly."""
        if rel not in self.files:
            raise KeyError(f"no static file {rel!r}")
        return f"{self.prefix}/{rel}"


def plotly_js_path() -> Path:
    """The bundled plotly.min.js as a real file (wheels install package data unzipped)."""
    return Path(str(importlib.resources.files("plotly") / "package_data" / "plotly.min.js"))


def plotly_js_version() -> str:
    # The bundle's own version (plotly.js), not the Python package's: the file is what we serve.
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


def plotly_url(version: str) -> str:
    return f"/vendor/plotly-{version}.min.js"


def _static_router(tree: StaticTree, store: compression.GzipOnce) -> APIRouter:
    router = APIRouter(tags=["assets"], include_in_schema=False)
    # Weak: the gzip and identity bodies differ, and both stand for the same version.
    etag = f'W/"{tree.digest}"'

    def send(request: Request, rel: str, headers: dict[str, str]) -> Response:
        return compression.asset(
            request, store, f"static/{rel}", lambda: tree.files[rel], media_type(rel), headers
        )

    @router.api_route("/static/{path:path}", methods=["GET", "HEAD"])
    def static(request: Request, path: str) -> Response:
        head, _, rest = path.partition("/")
        if head == tree.digest and rest in tree.files:
            return send(request, rest, {"Cache-Control": IMMUTABLE})
        if path not in tree.files:  # a stale hash lands here too: its path is no file of ours
            raise HTTPException(404, "no such static file in this version")
        headers = {"Cache-Control": REVALIDATE, "ETag": etag}
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers={**headers, **compression.VARY})
        return send(request, path, headers)

    return router


def _plotly_router(version: str, store: compression.GzipOnce) -> APIRouter:
    router = APIRouter(tags=["assets"], include_in_schema=False)
    path = plotly_js_path()

    @router.get("/vendor/plotly-{requested}.min.js")
    def plotly_js(request: Request, requested: str) -> Response:
        if requested != version:
            raise HTTPException(404, f"this server ships plotly.js {version}")
        headers = {"Cache-Control": IMMUTABLE}
        return compression.asset(
            request, store, f"vendor/{path.name}", path.read_bytes, "text/javascript", headers
        )

    return router


def install(app: FastAPI) -> None:
    """Serve /static (hashed and bare) and the versioned Plotly; record both for the templates:
    ``app.state.static.url('js/flow.js')`` and ``app.state.plotly_url``. Needs
    ``compression.install`` first, for the store the gzip bytes are kept in."""
    version = plotly_js_version()
    tree = StaticTree.load(asset_dir("static"))
    app.state.plotly_url = plotly_url(version)
    app.state.static = tree
    app.include_router(_static_router(tree, app.state.gzipped))
    app.include_router(_plotly_router(version, app.state.gzipped))
