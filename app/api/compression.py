"""gzip for what this server sends, when the client says it takes gzip.

Pages and JSON differ per request, so GZipMiddleware compresses them as they go out. Assets
(our static files, Plotly, the docs bundles) never change while the server runs, so each is
compressed once, on its first request, and the bytes are kept in a ``GzipOnce`` on app.state:
Plotly's 4.8 MB is not recompressed per visit. The middleware passes those responses through
because they already carry Content-Encoding. Websockets are not HTTP and are never touched.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Mapping

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.middleware.gzip import GZipMiddleware

# Below this a response fits in a packet or two; compressing it buys nothing.
MIN_BYTES = 1024
# Per-request compression of pages and JSON: level 6 is nearly level 9's size for far less CPU.
DYNAMIC_LEVEL = 6
# Assets are compressed once, so they get the smallest output.
ASSET_LEVEL = 9
VARY = {"Vary": "Accept-Encoding"}
_TEXTUAL = ("text/", "application/json", "application/javascript", "image/svg+xml")


def _quality(params: str) -> float:
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header allows gzip (``gzip;q=0`` refuses it)."""
    codings: dict[str, float] = {}
    for part in accept_encoding.split(","):
        name, _, params = part.partition(";")
        codings[name.strip().lower()] = _quality(params)
    return codings.get("gzip", codings.get("*", 0.0)) > 0


def compressible(media_type: str) -> bool:
    return media_type.startswith(_TEXTUAL)


class GzipOnce:
    """Each asset's gzip bytes, made on first use and kept. Bounded by its callers: they look
    up only keys from a fixed list of files (the static tree, Plotly, the docs bundles)."""

    def __init__(self) -> None:
        self._bytes: dict[str, bytes | None] = {}
        # One lock for all keys: two first visits at once must not both compress Plotly.
        self._lock = threading.Lock()

    def get(self, key: str, read: Callable[[], bytes]) -> bytes | None:
        """The gzip bytes for key, or None when gzip would not be smaller than read()."""
        with self._lock:
            if key not in self._bytes:
                raw = read()
                packed = gzip.compress(raw, compresslevel=ASSET_LEVEL, mtime=0)
                self._bytes[key] = packed if len(packed) < len(raw) else None
            return self._bytes[key]


def asset(
    request: Request,
    store: GzipOnce,
    key: str,
    read: Callable[[], bytes],
    media_type: str,
    headers: Mapping[str, str],
) -> Response:
    """One asset: its kept gzip bytes if the client takes gzip, else its identity bytes."""
    headers = {**headers, **VARY}
    if compressible(media_type) and accepts_gzip(request.headers.get("accept-encoding", "")):
        packed = store.get(key, read)
        if packed is not None:
            headers["Content-Encoding"] = "gzip"
            return Response(packed, media_type=media_type, headers=headers)
    return Response(read(), media_type=media_type, headers=headers)


def install(app: FastAPI) -> None:
    """gzip for dynamic responses, and the store that asset routes keep their gzip bytes in.
    Install before the asset routes: they take the store from app.state when installed."""
    app.state.gzipped = GzipOnce()
    app.add_middleware(GZipMiddleware, minimum_size=MIN_BYTES, compresslevel=DYNAMIC_LEVEL)
