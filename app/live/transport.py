"""Best-effort access to a websocket's transport, to bound what a stalled viewer can hold.

ASGI hides the socket, but a stalled viewer is only visible to us once the buffers under
``send`` fill: asyncio's (64 KiB by default) and the kernel's, which Linux autotunes to
megabytes on a fast link (1.7 MB measured on loopback). A viewer that never reads would
then look healthy for minutes. Capping both at ``VIEWER_BUFFER_BYTES`` makes ``send`` block
within a second of stalling, so the hub's "full for a few seconds" rule applies, and lets a
kick abort the connection at once instead of waiting for a buffer that never drains.

The server's ``send`` is found by walking the ASGI send chain (middlewares wrap it in
closures) to a bound method whose owner holds an asyncio transport: uvicorn's websocket
protocols do. Under another server nothing is found and nothing changes but detection time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from fastapi import WebSocket

VIEWER_BUFFER_BYTES = 64 * 1024  # ~0.5 s of a busy run's feed; ample for any link's BDP


def transport_of(ws: WebSocket) -> asyncio.BaseTransport | None:
    stack, seen = [getattr(ws, "_send", None)], set()
    while stack and len(seen) < 64:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        transport = getattr(getattr(fn, "__self__", None), "transport", None)
        # Duck-typed: uvloop's transports do not subclass asyncio.BaseTransport.
        if hasattr(transport, "get_extra_info") and hasattr(transport, "abort"):
            return transport
        for cell in getattr(fn, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell
                if callable(cell.cell_contents):
                    stack.append(cell.cell_contents)
    return None


def cap_buffers(transport: asyncio.BaseTransport, nbytes: int = VIEWER_BUFFER_BYTES) -> None:
    """Small kernel send buffer (Linux doubles the request) and asyncio high-water mark."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError, AttributeError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, nbytes // 2)
    if hasattr(transport, "set_write_buffer_limits"):
        with contextlib.suppress(Exception):
            transport.set_write_buffer_limits(high=nbytes)


def abort(transport: asyncio.BaseTransport | None) -> None:
    if transport is not None and hasattr(transport, "abort"):
        with contextlib.suppress(Exception):
            transport.abort()
