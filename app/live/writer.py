"""Group commit between the event loop and the store's one writer thread.

Every producer connection submits ops (hello, record, status, event) and gets a future. One
task takes whatever has queued up, commits it as one transaction on the writer thread, and
only then resolves the futures, so "acknowledged" always means "committed". While one batch
commits the next one gathers, so the fsync per commit is shared by every producer instead
of paid per record.

An op the store refuses alone (``RowRejected``, app.live.store) fails only its own future;
the rest of the batch is acknowledged and fanned out as usual. A read-only store refuses
every op the same way, at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from app.live.store import RowRejected, Store

log = logging.getLogger("meshscope.live")
Committed = list[tuple[str, tuple, object]]  # (op, args, result) of one transaction


class Writer:
    def __init__(self, store: Store, batch: int, on_commit: Callable[[Committed], None]) -> None:
        self.store, self.batch, self.on_commit = store, batch, on_commit
        self.queue: asyncio.Queue = asyncio.Queue()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="meshscope-store")
        self._task: asyncio.Task | None = None
        self.commits = 0
        self.ops = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="store-writer")

    def submit(self, op: str, *args) -> asyncio.Future:
        """Queue one op; the future resolves with its result once its transaction commits."""
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
        self.queue.put_nowait((op, args, future))
        return future

    async def call(self, fn: Callable, *args):
        """Run ``fn`` on the writer thread (reads that must follow every queued write)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def _run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            if batch[0] is None:
                return
            while len(batch) < self.batch and not self.queue.empty():
                item = self.queue.get_nowait()
                if item is None:
                    self.queue.put_nowait(None)  # finish this batch, then stop
                    break
                batch.append(item)
            await self._commit(batch)

    async def _commit(self, batch: list) -> None:
        ops = [(op, args) for op, args, _ in batch]
        try:
            results = await self.call(self.store.transaction, ops)
        except Exception as err:  # noqa: BLE001 - disk full, I/O: every waiter learns it
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(err)
            return
        self.commits += 1
        self.ops += len(batch)
        committed: Committed = []
        for (op, args, future), result in zip(batch, results, strict=True):
            if isinstance(result, RowRejected):
                log.warning("store refused one %s op, the rest of its batch committed: %s",
                            op, result)  # fmt: skip
                if not future.done():
                    future.set_exception(result)
                continue
            if not future.done():
                future.set_result(result)
            committed.append((op, args, result))
        self.on_commit(committed)

    async def stop(self) -> None:
        """Commit what is queued, then close the store on its own thread."""
        if self._task is not None:
            self.queue.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.call(self.store.close)
        self._executor.shutdown(wait=True)
