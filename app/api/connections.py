"""Connections a slow or hostile client cannot hoard (issue 26 item 3: 896 sockets trickling a
byte every 5 s held the connection cap, and 0 of 20 real requests were served).

``guarded_protocol`` wraps uvicorn's HTTP protocol (after app/fd_limit.py's cap) with:

- a header-read timeout: a request's head must be complete within ``header_timeout_s`` of
  the connection being made, or of the previous answer on a kept-alive connection. uvicorn
  (0.55) has none: its ``timeout_keep_alive`` is armed only after a response and cancelled
  by any byte received, and h11's ``max_incomplete_event_size`` bounds the head's size, not
  its time. So a timer per connection, armed while it waits for a head and checked against
  the request cycle uvicorn starts once the head is parsed: the smallest hook that works
  for both uvicorn protocols (h11 and httptools), as both expose ``cycle`` and
  ``on_response_complete``;
- a per-address limit: one address holds at most ``per_client`` HTTP connections (a
  websocket stops counting once upgraded); the next is answered 503 and closed at once;
- a reserve: connections still waiting for a head may fill at most the cap minus
  ``reserve``. A new connection past that closes the oldest one still waiting (if it has
  waited a while: ``min_wait_s``), so however
  many sockets trickle, a client that sends its request at once (a probe of /healthz, a
  page) is accepted and served. A connection serving a request is never closed for this.

The idle timeout of a kept-alive connection is uvicorn's ``timeout_keep_alive`` (app/cli.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

LOG = logging.getLogger("uvicorn.error")
_REFUSAL = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
PER_CLIENT_MESSAGE = "meshscope: a client address is at its connection limit; refused one"
EVICT_MESSAGE = "meshscope: connections waiting for a request head fill the reserve; closed one"


@dataclass(frozen=True)
class ConnectionBounds:
    header_timeout_s: float
    per_client: int
    reserve: int

    @property
    def min_wait_s(self) -> float:
        """How long a connection waits for its head before it may be closed to make room: a
        real client's head follows its connect within a round trip."""
        return min(1.0, self.header_timeout_s / 4)


def reserve_for(cap: int) -> int:
    """Connections kept for clients that send their request at once: an eighth of the cap,
    at least one (and never the whole cap)."""
    return max(1, min(cap // 8, cap - 1))


@dataclass
class _Table:
    """One server's connections by address, and those waiting for a head, oldest first."""

    by_client: dict[str, int] = field(default_factory=dict)
    waiting: OrderedDict[Any, float] = field(default_factory=OrderedDict)  # -> since


def guarded_protocol(base: type[asyncio.Protocol], bounds: ConnectionBounds) -> type:
    """``base`` with the header-read timeout, the per-address limit and the reserve."""
    table = _Table()

    class Guarded(base):  # type: ignore[misc, valid-type]
        _address: str | None = None
        _head_timer: asyncio.TimerHandle | None = None
        _armed_cycle: object = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._make_room()  # before the base counts connections against the cap
            super().connection_made(transport)
            if transport.is_closing():  # refused over the cap by the base
                return
            address = self.client[0] if self.client else None
            if address is not None:
                if table.by_client.get(address, 0) >= bounds.per_client:
                    LOG.warning(PER_CLIENT_MESSAGE)
                    transport.write(_REFUSAL)
                    self._close()
                    return
                table.by_client[address] = table.by_client.get(address, 0) + 1
                self._address = address
            self._await_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self in table.waiting and self._head_arrived():
                self._stop_waiting()
            if self.transport.get_protocol() is not self:
                # A websocket now: its own protocol sees the close, not this one, so the
                # address's count is given back here or it would never be.
                self._forget_address()

        def on_response_complete(self) -> None:
            finished = self.cycle
            super().on_response_complete()
            # Kept alive and no pipelined request started: waiting for the next head.
            if not self.transport.is_closing() and self.cycle is finished:
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            self._forget_address()
            super().connection_lost(exc)

        def _forget_address(self) -> None:
            if self._address is None:
                return
            left = table.by_client.get(self._address, 1) - 1
            if left:
                table.by_client[self._address] = left
            else:
                table.by_client.pop(self._address, None)
            self._address = None

        def _head_arrived(self) -> bool:
            # uvicorn starts a new cycle once a head is parsed; a websocket upgrade hands the
            # transport to another protocol instead.
            return self.cycle is not self._armed_cycle or self.transport.get_protocol() is not self

        def _make_room(self) -> None:
            """Close the oldest connections waiting for a head while they fill the room
            they may use (the cap less the reserve), if they have waited at least
            ``min_wait_s``: a burst of connections is accepted before any of their heads is
            read, and those must not close each other."""
            room = max(1, (self.limit_concurrency or 1 << 30) - bounds.reserve)
            since = self.loop.time() - bounds.min_wait_s
            while len(table.waiting) >= room:
                oldest, made = next(iter(table.waiting.items()))
                if made > since:
                    break  # none waited long: the cap refuses the newcomer if it must
                LOG.warning(EVICT_MESSAGE)
                oldest._close_waiting()

        def _await_head(self) -> None:
            self._make_room()
            self._armed_cycle = self.cycle
            table.waiting[self] = self.loop.time()
            self._head_timer = self.loop.call_later(bounds.header_timeout_s, self._head_late)

        def _stop_waiting(self) -> None:
            table.waiting.pop(self, None)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self in table.waiting and not self._head_arrived():
                self._close_waiting()

        def _close_waiting(self) -> None:
            self._stop_waiting()
            self._close()

        def _close(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()
            # Out of uvicorn's count now, not at connection_lost (the next loop turn): the
            # cap and limit_concurrency checks of connections made meanwhile count it.
            self.connections.discard(self)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded
