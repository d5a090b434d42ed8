"""MESHSCOPE_READ_TOKEN: who may read measured runs.

Unset, runs are public, as before. Set, the run list and run API (``/api/runs*``), the run
pages (``/runs*``), the per-run series of ``/metrics`` and the viewer sockets
(``/ws/runs/*``) answer only a client that shows the token: an ``Authorization: Bearer``
header (scripts, Prometheus' ``authorization`` scrape setting) or the cookie that ``/login``
sets for a browser. The cookie holds an HMAC of the token, not the token, so a leaked cookie
does not reveal it; it is HttpOnly and SameSite=Lax (sent on a followed link, not on a
foreign site's POST or fetch). Every compare is constant-time (hmac.compare_digest).
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from app.errors import responses

COOKIE = "meshscope_read"
COOKIE_MAX_AGE_S = 30 * 24 * 3600
LOGIN = "/login"
UNAUTHORIZED = responses(401)


def read_token(conn: HTTPConnection) -> str | None:
    return conn.app.state.settings.read_token


def cookie_value(token: str) -> str:
    """What the browser keeps: HMAC-SHA256 keyed by the token (RFC 2104), never the token."""
    return hmac.new(token.encode(), b"meshscope read cookie v1", hashlib.sha256).hexdigest()


def shows_token(conn: HTTPConnection) -> bool:
    """True when no read token is set, or the request carries it (header or cookie)."""
    token = read_token(conn)
    if token is None:
        return True
    header = conn.headers.get("authorization") or ""
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode()):
        return True
    cookie = conn.cookies.get(COOKIE) or ""
    return hmac.compare_digest(cookie.encode(), cookie_value(token).encode())


def require_read(request: Request) -> None:
    """Dependency of the run API: 401 (with the Bearer challenge of RFC 6750) without it."""
    if not shows_token(request):
        raise HTTPException(
            401, "this server's runs need its read token", {"WWW-Authenticate": "Bearer"}
        )


def safe_next(path: str | None) -> str:
    """A local path to return to after login: never another site (no open redirect)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/runs"
    return path


def login_url(request: Request) -> str:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"{LOGIN}?next={quote(safe_next(target), safe='')}"
