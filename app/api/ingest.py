"""WS /ws/ingest: probe ranks stream their records here (app.core.inputs.protocol, version 1).

The token is checked before the handshake is accepted, in constant time: a wrong or missing
one gets HTTP 403 and no websocket at all. Then two tasks share the connection: the reader
validates each frame (app.live.ingest_session) and hands records to the group-commit
writer; the sender sends replies in order, each record's ack only once it has committed,
coalescing acks that are ready together (an ack covers everything before it). A record the
store refuses alone gets a non-fatal error frame naming it; only a failed commit (the
store itself failing) closes the connection with 1011.

The handshake's answer carries ``protocol.BATCH_HEADER`` (the most records a records frame
may hold): a sender that sees it may batch; an older server sends none, and the sender then
sends one record per frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac

from fastapi import APIRouter, WebSocket

from app.core.inputs.protocol import BATCH_HEADER, MAX_BATCH_RECORDS
from app.live.ingest_session import (
    Fatal,
    PendingAck,
    PendingBatch,
    Session,
    ack_of,
    error,
    what_of,
)
from app.live.rates import TokenBucket
from app.live.services import Live
from app.live.store import RowRejected

router = APIRouter(tags=["live"])
_CLOSE = object()
POLICY_VIOLATION = 1008  # RFC 6455 §7.4.1
INTERNAL_ERROR = 1011


class Room:
    """Records read but not yet answered on one connection (LiveConfig.max_inflight): reading
    stops while they are ``cap`` or more, so one frame may go past it by its own records (a
    records frame's are validated and submitted together). The outbox's own bound counts
    frames, and a records frame is one frame of up to MAX_BATCH_RECORDS records."""

    def __init__(self, cap: int) -> None:
        self.cap, self.used = cap, 0
        self._freed = asyncio.Event()

    async def wait(self) -> None:
        while self.used >= self.cap:
            self._freed.clear()
            await self._freed.wait()

    def take(self, reply) -> None:
        self.used += _weight(reply)

    def give(self, reply) -> None:
        self.used -= _weight(reply)
        self._freed.set()


def _weight(reply) -> int:
    if isinstance(reply, PendingBatch):
        return len(reply.recs)
    return 1 if isinstance(reply, PendingAck) else 0


def bearer_ok(header: str | None, token: str | None) -> bool:
    """``Authorization: Bearer <token>``, compared with hmac.compare_digest (constant time)."""
    if not token or not header:
        return False
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())


@router.websocket("/ws/ingest")
async def ingest(ws: WebSocket) -> None:
    live: Live = ws.app.state.live
    full = live.stats.connections >= live.config.max_ingest_connections
    if full or not bearer_ok(ws.headers.get("authorization"), live.token):
        live.stats.refused += 1
        await ws.close(code=POLICY_VIOLATION)  # before accept: the client gets HTTP 403
        return
    await ws.accept(headers=[(BATCH_HEADER.encode(), str(MAX_BATCH_RECORDS).encode())])
    live.stats.connections += 1
    session = Session(live)
    outbox: asyncio.Queue = asyncio.Queue(maxsize=live.config.max_inflight)
    room = Room(live.config.max_inflight)
    sender = asyncio.create_task(_send(ws, outbox, room))
    try:
        reason = await _read(ws, session, outbox, room, live)
        if reason is not None:
            await _close_after(sender, outbox, ws, reason, live)
    finally:
        live.stats.connections -= 1
        session.closed()
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender


async def _read(
    ws: WebSocket, session: Session, outbox: asyncio.Queue, room: Room, live: Live
) -> str | None:
    """Until the peer leaves (None) or a fatal problem (its reason)."""
    bucket = TokenBucket(live.config.rate_frames_per_s, live.config.rate_burst)
    while True:
        if room.used >= room.cap:  # too many records unanswered: stop reading, TCP pushes back
            await room.wait()
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return None
        delay = bucket.take()
        if delay > 0:  # over the rate cap: read more slowly, TCP pushes back on the producer
            live.stats.throttled += 1
            await asyncio.sleep(delay)
        try:
            replies = await session.handle(message.get("text"), message.get("bytes"))
        except Fatal as fatal:
            for owed in fatal.before:  # a records frame's accepted records, then the refusal
                room.take(owed)
                await outbox.put(owed)
            await outbox.put(fatal.frame)
            return fatal.reason
        for reply in replies:
            room.take(reply)
            await outbox.put(reply)  # a full outbox stops reading: bounded memory


async def _close_after(sender, outbox, ws: WebSocket, reason: str, live: Live) -> None:
    """Flush what is owed (acks, the error frame), then close with policy violation."""
    live.stats.policy_closes += 1
    await outbox.put(_CLOSE)
    with contextlib.suppress(asyncio.TimeoutError, Exception):
        await asyncio.wait_for(sender, timeout=5)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code=POLICY_VIOLATION, reason=reason[:120]), 2)


async def _send(ws: WebSocket, outbox: asyncio.Queue, room: Room) -> None:
    carry = None
    while True:
        item, carry = (carry, None) if carry is not None else (await outbox.get(), None)
        if item is _CLOSE:
            return
        room.give(item)  # answered below (or the connection closes)
        if isinstance(item, PendingBatch):
            if not await _send_batch(ws, item):
                return
            continue
        if not isinstance(item, PendingAck):
            await ws.send_text(item)
            continue
        try:
            await item.future
        except RowRejected as refused:  # this frame only: the rest of its batch committed
            await ws.send_text(error("bad_frame", f"{item.what} was not stored: {refused}"))
            continue
        except Exception:  # noqa: BLE001 - the commit failed: nothing of it is acked
            await ws.send_text(error("internal", "store write failed; reconnect and resend"))
            await ws.close(code=INTERNAL_ERROR)
            return
        latest = item
        while not outbox.empty():
            nxt = outbox.get_nowait()
            ready = isinstance(nxt, PendingAck) and nxt.future.done()
            if not ready or nxt.future.exception() is not None:
                carry = nxt
                break
            room.give(nxt)
            latest = nxt
        await ws.send_text(latest.ack)  # the last one covers those before it


async def _send_batch(ws: WebSocket, item: PendingBatch) -> bool:
    """A records frame's replies once it committed: an error frame per record the store
    refused, then the ack of its last stored record (which covers the ones before it).
    False when the commit failed: the connection is closed with 1011, as for one record."""
    try:
        results = await item.future
    except RowRejected as refused:  # a read-only store: none of them
        await ws.send_text(error("bad_frame", f"records were not stored: {refused}"))
        return True
    except Exception:  # noqa: BLE001 - the commit failed: nothing of it is acked
        await ws.send_text(error("internal", "store write failed; reconnect and resend"))
        await ws.close(code=INTERNAL_ERROR)
        return False
    latest = None
    for result, rec in zip(results, item.recs, strict=True):
        if isinstance(result, RowRejected):
            await ws.send_text(error("bad_frame", f"{what_of(rec)} was not stored: {result}"))
        else:
            latest = rec
    if latest is not None:
        await ws.send_text(ack_of(latest))
    return True
