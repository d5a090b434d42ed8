"""Admission for heavy requests (evaluate, simulate, plan, trace): a few at a time, off the
event loop, and a 429 with ``Retry-After`` once the queue is full.

One ``HeavyLimiter`` per app, on ``app.state.heavy``, sized from settings. A request takes a
slot before its work starts: at once if one is free, else it queues, at most ``queue`` deep
and for at most ``wait_s``. Past either bound it is refused (429) instead of piling up CPU and
memory: four 190 MB traces at once were 3.2 GB and a 9.5 s stall of /healthz (issue 13).
The work itself runs on the thread pool, so the event loop keeps answering while it runs,
with the cyclic collector paused while any slot is held (``GCPause``): the work builds
millions of acyclic dicts, and each full collection of that heap held the GIL, so every other
request, ~300 ms. A per-call pause (app/core/support/gc_pause.py) is not enough with several
at once: the first to finish turned the collector back on under the others' heaps.

Pages bound what they embed the same way: a view model whose JSON is over
``settings.page_embed_bytes`` is not put in the HTML (``embed_bounded``); the page says so
and its script fetches the same JSON from the API instead.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import anyio
from fastapi import HTTPException, Request
from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from app.core.support.gc_pause import gc_paused

T = TypeVar("T")
Evaluator = Callable[[Any], dict[str, Any]]


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
    leaves, and only if it was on before. Holders enter and leave on the event loop, so a
    plain count is safe."""

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


class HeavyLimiter:
    """``slots`` heavy requests run at once; ``queue`` more may wait up to ``wait_s``."""

    def __init__(self, slots: int, queue: int, wait_s: float) -> None:
        self.slots, self.queue, self.wait_s = slots, queue, wait_s
        self._limiter = anyio.CapacityLimiter(slots)
        self.gc = GCPause()
        self.refused = 0

    @property
    def retry_after_s(self) -> int:
        # A slot frees within about one heavy request; the wait bound is that time's scale.
        return max(1, math.ceil(self.wait_s))

    @property
    def running(self) -> int:
        return int(self._limiter.borrowed_tokens)

    async def acquire(self) -> object:
        """A slot's token, to hand to ``release``; raises Busy when none comes in time."""
        token = await self._take()
        self.gc.enter()
        return token

    async def _take(self) -> object:
        token = object()
        try:
            self._limiter.acquire_on_behalf_of_nowait(token)
            return token
        except anyio.WouldBlock:
            pass
        if self._limiter.statistics().tasks_waiting >= self.queue:
            self._refuse()
        with anyio.move_on_after(self.wait_s):
            await self._limiter.acquire_on_behalf_of(token)
            return token
        self._refuse()

    def release(self, token: object) -> None:
        self._limiter.release_on_behalf_of(token)
        self.gc.leave()

    def _refuse(self) -> None:
        self.refused += 1
        raise Busy(self.retry_after_s)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        token = await self.acquire()
        try:
            yield
        finally:
            self.release(token)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the thread pool, once a slot is ours."""
        async with self.slot():
            return await run_in_threadpool(gc_paused(fn), *args, **kwargs)

    async def stream(
        self, prepare: Callable[[], Iterator[bytes]], **response: Any
    ) -> StreamingResponse:
        """A streamed answer holding one slot until its last byte is sent (or the client
        goes): ``prepare`` runs on the thread pool first, so its errors (a 422) come before
        any byte; each chunk of the iterator it returns is then made on the thread pool."""
        token = await self.acquire()
        try:
            chunks = await run_in_threadpool(gc_paused(prepare))
        except BaseException:
            self.release(token)
            raise
        pieces = iterate_in_threadpool(_paused(chunks))
        return _HeldStream(partial(self.release, token), pieces, **response)


def _paused(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Each chunk made with the cyclic collector paused, as the work before it was."""
    step = gc_paused(next)
    while (piece := step(chunks, None)) is not None:
        yield piece


def heavy(request: Request) -> HeavyLimiter:
    """The app's limiter (made in create_app from settings)."""
    return request.app.state.heavy


class _HeldStream(StreamingResponse):
    """A StreamingResponse that hands its slot back however the response ends."""

    def __init__(self, release: Callable[[], None], content: Any, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
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


def embed_bounded(request: Request, run: Evaluator) -> Evaluator:
    """``run``, but raising TooLargeToEmbed for a view model over the embed bound. With the
    app's own cache the size is the cached JSON's, known before any parse."""
    cache = request.app.state.scenario_cache
    limit = request.app.state.settings.page_embed_bytes

    def bounded(scenario: Any) -> dict[str, Any]:
        if run == cache.model:
            size = len(cache.entry(scenario).body)
            if size > limit:
                raise TooLargeToEmbed(size, limit)
            return run(scenario)
        model = run(scenario)  # a test's own evaluator: measured the way the cache would
        size = len(json.dumps(model, separators=(",", ":")))
        if size > limit:
            raise TooLargeToEmbed(size, limit)
        return model

    return bounded
