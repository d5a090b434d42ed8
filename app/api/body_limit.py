"""Every request body has a cap (issue 26: one 300 MB POST to /api/hardware/validate was
buffered whole and added 871 MB of RSS).

A pure ASGI middleware, so nothing is read before the check: a declared Content-Length over
``max_bytes`` is answered 413 at once, and a body without one (chunked) is counted as it
arrives and refused the moment it passes the cap. Refusing mid-body raises ``TooLarge``, an
HTTPException, from ``receive``: FastAPI lets HTTPExceptions out of its body parsing as they
are, so the app's own handler answers 413.

The body must also arrive in time: each read of it waits at most ``timeout_s`` (408 past it;
reads after its last part, a streamed answer's wait for the disconnect, are not timed). A
head sent whole and a body trickled, or never sent, would otherwise hold its connection (and
a task) for as long as the client liked: the slowloris of bodies, past the header-read
timeout of app/api/connections.py.
"""

from __future__ import annotations

import anyio
from fastapi import FastAPI, HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class TooLarge(HTTPException):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"the request body is larger than {max_bytes} bytes")


class TooSlow(HTTPException):
    def __init__(self, timeout_s: float) -> None:
        super().__init__(408, f"the request body did not arrive within {timeout_s:g} s")


class BodyLimit:
    def __init__(
        self, app: ASGIApp, max_bytes: int, timeout_s: float = 60.0, larger: dict | None = None
    ) -> None:
        self.app, self.max_bytes, self.timeout_s = app, max_bytes, timeout_s
        # Exact paths with their own cap: the run import's upload (app/api/run_import.py)
        # streams trace files to disk, so its cap bounds the disk and the time, not memory.
        self.larger: dict[str, int] = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.larger.get(scope["path"], self.max_bytes)
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            detail = TooLarge(cap).detail
            # Connection: close, so the unread body is not taken for the next request.
            headers = {"Connection": "close"}
            await JSONResponse({"detail": detail}, 413, headers)(scope, receive, send)
            return
        await self.app(scope, self._counting(receive, cap), send)

    def _counting(self, receive: Receive, cap: int) -> Receive:
        seen, whole = 0, False

        async def counted() -> Message:
            nonlocal seen, whole
            if whole:  # past the body: a wait for the disconnect, as long as the answer
                return await receive()
            try:
                with anyio.fail_after(self.timeout_s):
                    message = await receive()
            except TimeoutError:
                raise TooSlow(self.timeout_s) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise TooLarge(cap)
                whole = not message.get("more_body", False)
            return message

        return counted


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server's HTTP parser refuses it before we are called
    return None


def install(
    app: FastAPI, max_bytes: int, timeout_s: float = 60.0, larger: dict | None = None
) -> None:
    """``larger``: exact paths whose bodies may be up to their own cap instead."""
    app.add_middleware(BodyLimit, max_bytes=max_bytes, timeout_s=timeout_s, larger=larger)
