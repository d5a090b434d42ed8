"""Which Host headers the HTTP API answers: the DNS-rebinding defence for plain HTTP.

A page on evil.example that re-resolves its own name to 127.0.0.1 makes the browser treat
our API as same-origin, yet every request it sends still says ``Host: evil.example``. So an
HTTP request whose Host is not one of ours gets a 400 before any route runs. Allowed, with
any port:

* ``localhost``, ``127.0.0.1``, ``::1``, the bound host and this machine's name;
* any IP literal: a rebinding page always carries a domain name, never an IP literal (the
  same reasoning as the websocket Origin check, app/live/origin.py);
* ``settings.allowed_hosts``: exact names, ``*.example.com`` for subdomains, ``*`` for
  every name (behind a reverse proxy that checks Host itself).

Websockets keep their own checks (viewers: Origin, app/live/origin.py; producers: the
ingest token, app/api/ingest.py), so a probe may reach the server under any name. That,
and IP literals, are why this is not Starlette's TrustedHostMiddleware, which refuses
websockets too and matches names only.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from fastapi import FastAPI
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.settings import Settings

# host[:port], host a name or a bracketed IPv6 literal (RFC 9110 §7.2, RFC 3986 §3.2.2).
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::\d{1,5})?$")
REFUSAL = {
    "detail": "this server does not answer for that Host header; add the name to "
    "MESHSCOPE_ALLOWED_HOSTS (or '*' behind a proxy that checks Host)"
}


def host_name(header: str) -> str | None:
    """The host part of a Host header, lower case, IPv6 without brackets; None if malformed."""
    match = _HOST.match(header.strip())
    if match is None:
        return None
    return (match["v6"] or match["name"]).lower()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostRule:
    names: frozenset[str]
    suffixes: tuple[str, ...]  # from "*.example.com": ".example.com"
    any_host: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> HostRule:
        own = {"localhost", "127.0.0.1", "::1", settings.host.strip("[]").lower()}
        own.add(socket.gethostname().lower())
        extra = [h.lower() for h in settings.allowed_hosts]
        suffixes = tuple(h[1:] for h in extra if h.startswith("*."))
        names = own | {h for h in extra if not h.startswith("*")}
        return cls(frozenset(names), suffixes, "*" in extra)

    def allows(self, header: str | None) -> bool:
        if header is None or self.any_host:  # no Host: not a browser (HTTP/1.0 scripts)
            return True
        host = host_name(header)
        if host is None:
            return False
        return host in self.names or host.endswith(self.suffixes) or _is_ip(host)


class HostCheck:
    """Pure ASGI middleware: HTTP requests with a foreign Host get 400, nothing else runs."""

    def __init__(self, app: ASGIApp, rule: HostRule) -> None:
        self.app, self.rule = app, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.rule.allows(_header(scope, b"host")):
            await JSONResponse(REFUSAL, status_code=400)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def install(app: FastAPI, settings: Settings) -> None:
    """Outermost when called last in create_app: a foreign Host costs no route any work."""
    app.add_middleware(HostCheck, rule=HostRule.from_settings(settings))
