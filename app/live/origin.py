"""Which browser origins may open a viewer websocket.

Browsers send ``Origin`` on every websocket handshake and enforce no same-origin rule on
websockets themselves, so the server must (cross-site websocket hijacking). Allowed:

* any origin listed in ``settings.allowed_origins`` (exact match, e.g. a reverse proxy's);
* the server's own origin: the Origin's host:port equals the request's Host header, and
  that host is an IP literal, ``localhost`` or the configured host. Matching Host alone
  would let a DNS-rebinding page (evil.example resolving to 127.0.0.1) through, and such a
  page always carries a domain name, never an IP literal.

No Origin at all means not a browser (a script, a test client): it can forge any header,
so refusing it protects nothing.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def origin_allowed(
    origin: str | None, host_header: str | None, server_host: str, allowed: list[str]
) -> bool:
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if origin in {o.strip().rstrip("/").lower() for o in allowed}:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname or host_header is None:
        return False
    if parts.netloc != host_header.strip().lower():
        return False
    host = parts.hostname
    return host in ("localhost", server_host.lower()) or _is_ip(host)
