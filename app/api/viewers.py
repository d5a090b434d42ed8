"""WS /ws/runs/{run}: a read-only live feed of one run for the browser.

Refused before accept (HTTP 403) for a foreign Origin, a malformed run name, a full
server, or, with MESHSCOPE_READ_TOKEN set, no read token (Bearer header or login cookie).
After accept the server sends ``[{"type": "hello", "run", "seq"}]``, then one JSON array per
tick (app.live.hub): ``batch`` frames of items and ``gap`` notices. The page
fetches ``/api/runs/{run}`` after the hello; every item up to ``seq`` is already in it.

Two tasks per viewer: the sender drains the viewer's queue; the receiver listens, so a
departed viewer is noticed at once, and any data frame from the browser closes the feed
(it is read-only). A kick from the hub cancels a send stuck on a socket that does not drain
and aborts the connection (app.live.transport).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re

from fastapi import APIRouter, WebSocket

from app.api.read_access import shows_token
from app.core.inputs.protocol import RUN_NAME_PATTERN
from app.live import transport
from app.live.hub import SHUTDOWN, Viewer
from app.live.origin import origin_allowed
from app.live.services import Live

router = APIRouter(tags=["live"])
GOING_AWAY = 1001
POLICY_VIOLATION = 1008
TRY_AGAIN_LATER = 1013  # RFC 6455 registry: the server is overloaded (here: you are slow)
_RUN = re.compile(RUN_NAME_PATTERN)


@router.websocket("/ws/runs/{run}")
async def viewer_feed(ws: WebSocket, run: str) -> None:
    live: Live = ws.app.state.live
    ok = origin_allowed(
        ws.headers.get("origin"), ws.headers.get("host"), live.host, live.allowed_origins
    )
    ok = ok and shows_token(ws)  # MESHSCOPE_READ_TOKEN, when set (app/api/read_access.py)
    viewer = live.hub.subscribe(run) if ok and _RUN.match(run) else None
    if viewer is None:
        await ws.close(code=POLICY_VIOLATION)  # before accept: HTTP 403
        return
    try:
        await ws.accept()
        await ws.send_text(json.dumps([{"type": "hello", "run": run, "seq": live.hub.seq(run)}]))
        await _serve(ws, viewer)
    except Exception:  # noqa: BLE001, S110 - the peer left mid-handshake: nothing to tell it
        pass
    finally:
        live.hub.unsubscribe(viewer)


async def _serve(ws: WebSocket, viewer: Viewer) -> None:
    sender = asyncio.create_task(_send(ws, viewer))
    receiver = asyncio.create_task(_receive(ws))
    link = transport.transport_of(ws)
    if link is not None:
        transport.cap_buffers(link)  # a stalled socket blocks send within a second

    def kick() -> None:
        sender.cancel()
        transport.abort(link)  # its buffers would never drain: free them now

    viewer.on_kick = kick
    done, pending = await asyncio.wait({sender, receiver}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    said = None
    if receiver in done and not receiver.cancelled() and receiver.exception() is None:
        said = receiver.result()
    if said == "data":
        code, reason = POLICY_VIOLATION, "this feed is read-only"
    elif viewer.closed.is_set():
        code = GOING_AWAY if viewer.reason == SHUTDOWN else TRY_AGAIN_LATER
        reason = viewer.reason
    else:
        return  # the viewer left
    # A stalled socket would block close() forever: give it a moment, then just drop it.
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code=code, reason=reason[:120]), 0.5)


async def _send(ws: WebSocket, viewer: Viewer) -> None:
    while not viewer.closed.is_set():
        await viewer.wake.wait()
        message = viewer.take()
        if message is not None:
            await ws.send_text(message)


async def _receive(ws: WebSocket) -> str:
    message = await ws.receive()
    return "gone" if message["type"] == "websocket.disconnect" else "data"
