"""Group commit between the event loop and the store's one writer thread.

Every producer connection submits ops (hello, record, status, event) and gets a future. One
task takes whatever has queued up, commits it as one transaction on the writer thread, and
only then resolves the futures, so "acknowledged" always means "committed". While one batch
commits the next one gathers, so the fsync per commit is shared by every producer instead
of paid per record.

Queued groups wait in a deque and the writer task sleeps on an event only when it is empty:
an asyncio.Queue's put and get were ~2 us a record of a 1,024-rank run's ingest at one
record per frame (issue 26 item 11).

An op the store refuses alone (``RowRejected``, app.live.store) fails only its own future;
the rest of the batch is acknowledged and fanned out as usual. A read-only store refuses
every op the same way, at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from app.live.store import RowRejected, Store

log = logging.getLogger("meshscope.live")
Committed = list[tuple[str, tuple, object]]  # (op, args, result) of one transaction


class Writer:
    def __init__(self, store: Store, batch: int, on_commit: Callable[[Committed], None]) -> None:
        self.store, self.batch, self.on_commit = store, batch, on_commit
        self.queue: deque = deque()  # (ops, future, many) groups; None: stop after them
        self._wake = asyncio.Event()  # set when the queue gains a group while empty
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="meshscope-store")
        self._task: asyncio.Task | None = None
        self.commits = 0
        self.ops = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-writer")

    def submit(self, op: str, *args) -> asyncio.Future:
        """Queue one op; the future resolves with its result once its transaction commits."""
        return self._put([(op, args)], many=False)

    def submit_many(self, ops: list[tuple[str, tuple]]) -> asyncio.Future:
        """Queue ops that go into one transaction together (a records frame's records); the
        future resolves with their results in order once it commits, a ``RowRejected`` in
        the slot of an op the store refused alone. One future, not one per op: a batch's
        records cost the event loop one wake-up, not one each."""
        return self._put(ops, many=True)

    def _put(self, ops: list[tuple[str, tuple]], many: bool) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        if self.store.readonly:
            # Refused for good, as a row the store cannot hold: a hello gets a fatal error
            # frame (app.live.ingest_session), which stops the producer's retries.
            future.set_exception(
                RowRejected(
                    f"the database {self.store.path} is read-only: this server stores nothing"
                )
            )
            return future
        self.queue.append((ops, future, many))
        if len(self.queue) == 1:  # it was empty: the writer may be asleep
            self._wake.set()
        return future

    async def call(self, fn: Callable, *args):
        """Run ``fn`` on the writer thread (reads that must follow every queued write)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def _run(self) -> None:
        queue = self.queue
        while True:
            while not queue:
                self._wake.clear()
                await self._wake.wait()
            first = queue.popleft()
            if first is None:
                return
            batch, n = [first], len(first[0])  # ops; a submit_many group is never split
            while n < self.batch and queue and queue[0] is not None:  # None: this, then stop
                item = queue.popleft()
                batch.append(item)
                n += len(item[0])
            await self._commit(batch)

    async def _commit(self, batch: list) -> None:
        ops = [op for group, _, _ in batch for op in group]
        try:
            results = await self.call(self.store.transaction, ops)
        except Exception as err:  # noqa: BLE001 - disk full, I/O: every waiter learns it
            for _, future, _ in batch:
                if not future.done():
                    future.set_exception(err)
            return
        self.commits += 1
        self.ops += len(ops)
        committed: Committed = []
        at = 0
        for group, future, many in batch:
            mine = results[at : at + len(group)]
            at += len(group)
            for (op, args), result in zip(group, mine, strict=True):
                if isinstance(result, RowRejected):
                    log.warning("store refused one %s op, the rest of its batch committed: %s",
                                op, result)  # fmt: skip
                else:
                    committed.append((op, args, result))
            if future.done():
                continue
            if many:
                future.set_result(mine)
            elif isinstance(mine[0], RowRejected):
                future.set_exception(mine[0])
            else:
                future.set_result(mine[0])
        self.on_commit(committed)

    async def stop(self) -> None:
        """Commit what is queued, then close the store on its own thread."""
        if self._task is not None:
            self.queue.append(None)
            self._wake.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.call(self.store.close)
        self._executor.shutdown(wait=True)
