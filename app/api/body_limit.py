"""Every request body has a cap (issue 26: one 300 MB POST to /api/hardware/validate was
buffered whole and added 871 MB of RSS).

A pure ASGI middleware, so nothing is read before the check: a declared Content-Length over
``max_bytes`` is answered 413 at once, and a body without one (chunked) is counted as it
arrives and refused the moment it passes the cap. Refusing mid-body raises ``TooLarge``, an
HTTPException, from ``receive``: FastAPI lets HTTPExceptions out of its body parsing as they
are, so the app's own handler answers 413.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class TooLarge(HTTPException):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"the request body is larger than {max_bytes} bytes")


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            detail = TooLarge(self.max_bytes).detail
            # Connection: close, so the unread body is not taken for the next request.
            headers = {"Connection": "close"}
            await JSONResponse({"detail": detail}, 413, headers)(scope, receive, send)
            return
        await self.app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise TooLarge(self.max_bytes)
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


def install(app: FastAPI, max_bytes: int) -> None:
    app.add_middleware(BodyLimit, max_bytes=max_bytes)
