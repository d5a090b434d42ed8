"""Heavy-request slots, weighted by each request's estimated cost, with a fair share per
client address (issue 26 item 1-2).

A request asks for ``weight`` slots (1 to all of them, from its cost estimate: ``weight``).
It gets them at once if they are free and nobody is queued before it, else it queues, at
most ``queue`` deep and for at most ``wait_s``. One client address may hold at most
``per_client`` slots and have at most ``per_client`` requests queued: two sockets from one
address could otherwise take every slot for as long as they liked. Requests without an
address (the limiter called directly, as tests do) have no share.

Everything here runs on the event loop (acquire and release are called from it), so plain
counters need no lock. Waiters are served first come, first served; one that waits only for
its own address's share is passed over, since that address is being served already.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import anyio


class Refused(Exception):
    """No slot: the queue (or this address's share of it) is full, or the wait ran out."""


@dataclass(eq=False)
class Ticket:
    client: str | None
    weight: int
    granted: bool = False
    event: anyio.Event = field(default_factory=anyio.Event)


def weight(cost: float, slots: int) -> int:
    """Slots for a request of ``cost`` (1.0 = the biggest single scenario the Scenario allows,
    ~180 MB and ~2 s): at least one, at most all, so a 4-scenario compare runs alone."""
    return max(1, min(slots, math.ceil(cost)))


class Slots:
    def __init__(self, slots: int, per_client: int, queue: int, wait_s: float) -> None:
        self.slots, self.per_client, self.queue, self.wait_s = slots, per_client, queue, wait_s
        self.used = 0
        self._held: dict[str, int] = {}  # address -> slots it holds
        self._queued: dict[str, int] = {}  # address -> its requests waiting
        self._waiters: deque[Ticket] = deque()

    def held_by(self, client: str) -> int:
        return self._held.get(client, 0)

    async def acquire(self, client: str | None, weight: int) -> Ticket:
        ticket = Ticket(client, min(weight, self.slots))
        if not self._waiters and self._fits(ticket):
            self._grant(ticket)
            return ticket
        if len(self._waiters) >= self.queue or (
            client is not None and self._queued.get(client, 0) >= self.per_client
        ):
            raise Refused
        self._enqueue(ticket)
        self._wake()  # those queued ahead may wait only for their own address's share
        try:
            with anyio.move_on_after(self.wait_s):
                await ticket.event.wait()
        except BaseException:  # cancelled (the client went): give back what came meanwhile
            self._abandon(ticket)
            raise
        if not ticket.granted:
            self._abandon(ticket)
            raise Refused
        return ticket

    def release(self, ticket: Ticket) -> None:
        self.used -= ticket.weight
        if ticket.client is not None:
            self._count(self._held, ticket.client, -ticket.weight)
        self._wake()

    def _fits(self, ticket: Ticket) -> bool:
        if self.used + ticket.weight > self.slots:
            return False
        if ticket.client is None:
            return True
        return self.held_by(ticket.client) + ticket.weight <= max(self.per_client, ticket.weight)

    def _grant(self, ticket: Ticket) -> None:
        self.used += ticket.weight
        if ticket.client is not None:
            self._count(self._held, ticket.client, ticket.weight)
        ticket.granted = True
        ticket.event.set()

    def _enqueue(self, ticket: Ticket) -> None:
        self._waiters.append(ticket)
        if ticket.client is not None:
            self._count(self._queued, ticket.client, 1)

    def _abandon(self, ticket: Ticket) -> None:
        """A waiter that gives up: out of the queue, or its slots back if they just came."""
        if ticket.granted:
            self.release(ticket)
            return
        self._waiters.remove(ticket)
        if ticket.client is not None:
            self._count(self._queued, ticket.client, -1)
        self._wake()  # a heavy ticket at the head may have blocked lighter ones behind it

    def _wake(self) -> None:
        """Grant queued tickets in order while they fit. A ticket blocked by the total waits
        at the head (no starvation of a heavy one); one blocked only by its own address's
        share is passed over."""
        for ticket in list(self._waiters):
            if self.used + ticket.weight > self.slots:
                break
            if self._fits(ticket):
                self._waiters.remove(ticket)
                if ticket.client is not None:
                    self._count(self._queued, ticket.client, -1)
                self._grant(ticket)

    @staticmethod
    def _count(table: dict[str, int], key: str, delta: int) -> None:
        value = table.get(key, 0) + delta
        if value:
            table[key] = value
        else:
            table.pop(key, None)
