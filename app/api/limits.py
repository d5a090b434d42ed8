"""Admission for heavy requests (evaluate, simulate, plan, trace): a few at a time, off the
event loop, and a 429 with ``Retry-After`` once the queue is full.

One ``HeavyLimiter`` per app, on ``app.state.heavy``, sized from settings. A request takes a
slot before its work starts: at once if one is free, else it queues, at most ``queue`` deep
and for at most ``wait_s``. Past either bound it is refused (429) instead of piling up CPU and
memory: four 190 MB traces at once were 3.2 GB and a 9.5 s stall of /healthz (issue 13).
Slots are weighted by the request's cost estimate and shared fairly between client addresses
(app/api/admission.py); a request whose estimate is under ``light`` needs none.
Past the light bound the work runs in the app's worker processes (app/api/pool.py): on the
server's threads it held the GIL in turns with the event loop (issue 26 item 2). A slot is
held until its worker is done. Other work runs on the thread pool, the collector paused while
any slot is held (``GCPause``): the work builds millions of acyclic dicts, and each full
collection held the GIL ~300 ms; a per-call pause (gc_pause.py) is not enough with several at
once: the first to finish turned the collector back on under the others' heaps.

A streamed answer holds its slot while it is sent, so it must not wait on a client that
stopped reading (issue 26: two sockets that never read held both slots): a send that makes no
progress for ``stall_s`` ends it, and so does the whole answer taking over ``send_timeout_s``
(a client reading a byte now and then); either way the connection closes and the slot is free.

Pages bound what they embed the same way: a view model whose JSON is over
``settings.page_embed_bytes`` is not put in the HTML (``embed_bounded``); the page says so
and its script fetches the same JSON from the API instead.
"""

from __future__ import annotations

import gc
import json
import logging
import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import anyio
from fastapi import HTTPException, Request
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from app.api import costs
from app.api.admission import Refused, Slots, Ticket, weight
from app.api.pool import JobTimeout, WorkerPool
from app.core.support.gc_pause import gc_paused
from app.errors import responses

T = TypeVar("T")
LOG = logging.getLogger("uvicorn.error")
Evaluator = Callable[[Any], dict[str, Any]]

BUSY = responses(429)


class Busy(HTTPException):
    """429: every slot is taken and the queue is full (or the wait ran out)."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            status_code=429,
            detail="the server is busy with heavy requests; retry later",
            headers={"Retry-After": str(retry_after_s)},
        )


class GCPause:
    """The cyclic collector off while at least one holder is in, back on when the last
    leaves (if it was on before); on the event loop only, so a plain count is safe."""

    def __init__(self) -> None:
        self.holders = 0
        self._reenable = False

    def enter(self) -> None:
        if self.holders == 0:
            self._reenable = gc.isenabled()
            gc.disable()
        self.holders += 1

    def leave(self) -> None:
        self.holders -= 1
        if self.holders == 0 and self._reenable:
            gc.enable()


@dataclass(frozen=True)
class Bounds:
    """What a heavy request may take: slots, queue, waits, an address's share, send limits."""

    slots: int
    queue: int
    wait_s: float
    per_client: int = 64
    light: float = 0.0  # a cost estimate under this needs no slot
    stall_s: float = 30.0  # a send that makes no progress this long: the client stopped reading
    send_timeout_s: float = 600.0  # the whole of a streamed answer


class HeavyLimiter:
    """``slots`` heavy requests run at once; ``queue`` more may wait up to ``wait_s``."""

    def __init__(self, slots: int, queue: int, wait_s: float, **more: Any) -> None:
        self.bounds = Bounds(slots, queue, wait_s, **more)
        self.slots, self.queue, self.wait_s = slots, queue, wait_s
        self._slots = Slots(slots, self.bounds.per_client, queue, wait_s)
        self.gc = GCPause()
        self.refused = 0
        self.stalled = 0  # streamed answers ended because the client stopped reading

    @property
    def retry_after_s(self) -> int:
        # A slot frees within about one heavy request; the wait bound is that time's scale.
        return max(1, math.ceil(self.wait_s))

    @property
    def running(self) -> int:
        return self._slots.used

    def held_by(self, client: str) -> int:
        return self._slots.held_by(client)

    async def acquire(self, client: str | None = None, cost: float = 1.0) -> Ticket:
        """A slot's ticket, to hand to ``release``; raises Busy when none comes in time."""
        try:
            ticket = await self._slots.acquire(client, weight(cost, self.slots))
        except Refused:
            self.refused += 1
            raise Busy(self.retry_after_s) from None
        self.gc.enter()
        return ticket

    def release(self, ticket: Ticket) -> None:
        self._slots.release(ticket)
        self.gc.leave()

    def for_client(self, client: str | None, pool: WorkerPool | None = None) -> Admission:
        return Admission(self, client, pool)


class Admission:
    """One request's way in: the limiter, with the request's client address and cost, and
    the app's worker pool (None: every job on the thread pool)."""

    def __init__(
        self, limiter: HeavyLimiter, client: str | None, pool: WorkerPool | None = None
    ) -> None:
        self.limiter, self.client, self.pool = limiter, client, pool

    def light(self, cost: float | None) -> bool:
        return cost is not None and cost < self.limiter.bounds.light

    def pool_for(self, cost: float | None) -> WorkerPool | None:
        """The worker pool for work of this estimate; None for light work (a hop costs more
        than it saves), and in an app without one."""
        return None if self.light(cost) else self.pool

    @asynccontextmanager
    async def slot(self, cost: float = 1.0) -> AsyncIterator[None]:
        ticket = await self.limiter.acquire(self.client, cost)
        try:
            yield
        finally:
            self.limiter.release(ticket)

    async def run(self, fn: Callable[..., T], *args: Any, cost: float = 1.0) -> T:
        """``fn(*args)`` on the thread pool, once a slot is ours (the estimate says how many
        slots)."""
        async with self.slot(cost):
            with _timeout_busy(self.limiter):
                return await run_in_threadpool(gc_paused(fn), *args)

    async def run_estimated(self, fn: Callable[..., T], *args: Any, cost: float) -> T:
        """``run``, except that a request estimated under the light bound takes no slot: it
        is as quick as /healthz's neighbours, and queueing it behind heavy ones would turn
        every small scenario away during a flood of big ones."""
        if self.light(cost):
            return await run_in_threadpool(fn, *args)
        return await self.run(fn, *args, cost=cost)

    async def stream(
        self, prepare: Callable[[], Iterator[bytes]], cost: float = 1.0, **response: Any
    ) -> StreamingResponse:
        """A streamed answer holding its slot until its last byte is sent (or the client
        goes, or stops reading): ``prepare`` runs on the thread pool first, so its errors (a
        422) come before any byte; each chunk of the iterator it returns is then made on the
        thread pool."""
        limiter = self.limiter
        ticket = await limiter.acquire(self.client, cost)
        try:
            with _timeout_busy(limiter):
                chunks = await run_in_threadpool(gc_paused(prepare))
        except BaseException:
            limiter.release(ticket)
            raise
        pieces = iterate_in_threadpool(_paused(chunks))
        # A worker's job (app/api/pool.py) ends with the response, however it ends: a client
        # that went or stopped reading leaves no child making the rest.
        done = partial(_end, getattr(chunks, "abort", None), limiter, ticket)
        return _HeldStream(limiter, done, pieces, **response)


def _end(abort: Callable[[], None] | None, limiter: HeavyLimiter, ticket: Ticket) -> None:
    if abort:
        abort()
    limiter.release(ticket)


@contextmanager
def _timeout_busy(limiter: HeavyLimiter) -> Iterator[None]:
    """A worker's job past the pool's bound (its worker killed) answers as a full server."""
    try:
        yield
    except JobTimeout:
        limiter.refused += 1
        raise Busy(limiter.retry_after_s) from None


def _paused(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Each chunk made with the cyclic collector paused, as the work before it was."""
    step = gc_paused(next)
    while (piece := step(chunks, None)) is not None:
        yield piece


def heavy(request: Request) -> Admission:
    """The app's limiter and worker pool (made in create_app from settings), for this
    request's address."""
    client = request.client.host if request.client else None
    return request.app.state.heavy.for_client(client, getattr(request.app.state, "pool", None))


class _HeldStream(StreamingResponse):
    """A StreamingResponse that hands its slot back however the response ends, and ends it
    when a send makes no progress for ``stall_s`` or the whole takes ``send_timeout_s``."""

    def __init__(
        self, limiter: HeavyLimiter, release: Callable[[], None], content: Any, **kwargs: Any
    ) -> None:
        super().__init__(content, **kwargs)
        self._limiter, self._release = limiter, release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        bounds = self._limiter.bounds

        async def timed_send(message: Message) -> None:
            # uvicorn's send waits for the transport to drain before it writes (its
            # flow_control.py): a client that stopped reading keeps it waiting here.
            with anyio.fail_after(bounds.stall_s):
                await send(message)

        try:
            with anyio.fail_after(bounds.send_timeout_s):
                await super().__call__(scope, receive, timed_send)
        except TimeoutError:
            # Returning without the last byte makes uvicorn close the connection.
            self._limiter.stalled += 1
            LOG.warning("meshscope: a client read a streamed answer too slowly; closed it "
                        "and freed its heavy slot")  # fmt: skip
        finally:
            self._release()


class TooLargeToEmbed(Exception):
    """A view model over the page's embed bound: the page carries ``deferred()`` instead."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"view model is {size} bytes, over the embed bound of {limit}")
        self.size, self.limit = size, limit

    def deferred(self) -> dict[str, Any]:
        # What the page's script reads to fetch the view model and its data itself.
        return {"deferred": {"bytes": self.size, "limit": self.limit}}


def offloaded(request: Request, run: Evaluator) -> Evaluator:
    """``run``, but a heavy miss of the app's own cache evaluated in a worker process
    (app/api/pool.py), as /api/scenario's: the overview page's view model."""
    cache = request.app.state.scenario_cache
    admission = heavy(request)

    def pooled(scenario: Any) -> dict[str, Any]:
        if run != cache.model:
            return run(scenario)  # a test's own evaluator
        offload = admission.pool_for(costs.scenario(scenario)) is not None
        return cache.model(scenario, offload, head=True)  # the page embeds the body whole

    return pooled


def embed_bounded(request: Request, run: Evaluator) -> Evaluator:
    """``run``, but raising TooLargeToEmbed for a view model over the embed bound. With the
    app's own cache the size is the cached JSON's, known before any parse."""
    cache = request.app.state.scenario_cache
    limit = request.app.state.settings.page_embed_bytes
    admission = heavy(request)

    def bounded(scenario: Any) -> dict[str, Any]:
        if run == cache.model:
            # A big miss is evaluated in a worker process (app/api/pool.py), as on the API.
            offload = admission.pool_for(costs.scenario(scenario)) is not None
            size = len(cache.entry(scenario, offload).body)
            if size > limit:
                raise TooLargeToEmbed(size, limit)
            return cache.model(scenario, offload)
        model = run(scenario)  # a test's own evaluator: measured the way the cache would
        size = len(json.dumps(model, separators=(",", ":")))
        if size > limit:
            raise TooLargeToEmbed(size, limit)
        return model

    return bounded
