"""Heavy pure work in worker processes, so the server's own GIL stays free for its event loop
(issue 26 item 2).

Admission (app/api/limits.py) bounds how many heavy requests run at once, but their work
(evaluate, simulate, the planner, JSON encoding) is CPU-bound Python: on the server's threads
it held the GIL in turns with the event loop, and four at once took ``/healthz`` p99 to
80-170 ms (bench/bench_heavy.py). Here it runs in long-lived worker processes, each with its
own GIL; the server's thread only waits on a pipe. One ``WorkerPool`` per app
(``app.state.pool``, from settings, closed when the lifespan ends). Workers fork from the
forkserver (never from the threaded server), which imported the jobs once (``PRELOAD``).

A job is a picklable function and arguments (app/api/pool_jobs.py); the worker's side is
app/api/pool_worker.py. A job returning an iterator of bytes is sent back piece by piece as
raw bytes, so a 34 MB answer never crosses as one pickle (a ``pickle.loads`` of 190 MB held
the GIL 120 ms) and a streamed answer flows as made, the pipe's buffer its back-pressure.
Big inputs go the same way (``blobs``). Bounded: a job past ``timeout_s``, or a stream its
reader abandons, has its worker killed, so no child computes for a request that is gone; a
worker grown past ``recycle_bytes`` is replaced after its job, giving back its heap.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from multiprocessing.reduction import ForkingPickler
from typing import Any

from app.api.pool_worker import DONE, ERROR, PIECE, VALUE, Worker, kill_all, reap

PRELOAD = ["app.api.pool_jobs", "app.api.plan"]


class JobTimeout(Exception):
    """A job ran past the pool's ``timeout_s``: its worker was killed."""


class WorkerLost(Exception):
    """The worker died mid-job (killed, or out of memory)."""


class Job:
    """One job's answer as it comes: ``pieces()`` for a streamed one, ``value()`` for the
    rest. Holds its worker until the last message; ``abort()`` (from any thread) kills it."""

    def __init__(self, pool: WorkerPool, worker: Worker) -> None:
        self._pool, self._worker = pool, worker
        self._done = False
        self._deadline = time.monotonic() + pool.timeout_s  # the whole job's, not per message
        self._lock = threading.Lock()  # abort() may come from another thread than the reader
        self.aborted = False

    def _message(self) -> bytes:
        conn = self._worker.conn
        try:
            if not conn.poll(max(0.0, self._deadline - time.monotonic())):
                self._finish(False)
                raise JobTimeout(f"a heavy job ran past {self._pool.timeout_s:g} s")
            msg = conn.recv_bytes()
        except (EOFError, OSError) as exc:
            self._finish(False)
            raise WorkerLost("the worker process ended mid-job") from exc
        if msg[:1] != PIECE:
            self._finish(True)
        return msg

    def _final(self, msg: bytes) -> Any:
        if msg[:1] == ERROR:
            fn, args = pickle.loads(msg[1:])
            raise fn(*args)
        if msg[:1] == VALUE:
            return pickle.loads(msg[1:])
        return None  # DONE

    def pieces(self) -> Iterator[bytes]:
        """The job's pieces as the worker sends them; raises what the job raised."""
        try:
            while not self._done:
                try:
                    msg = self._message()
                except WorkerLost:
                    if self.aborted:  # abort() killed it: the reader is gone, nothing to say
                        return
                    raise
                if msg[:1] == PIECE:
                    yield msg[1:]
                else:
                    self._final(msg)
        finally:
            if not self._done:  # the reader stopped early: nobody will read the rest
                self.abort()

    def first(self) -> Iterator[bytes]:
        """``pieces()``, its first piece read now: a job that fails before its first piece
        (a 422) raises here, before any response starts."""
        it = self.pieces()
        try:
            head = next(it)
        except StopIteration:
            return iter(())
        return _Prepended(head, it, self)

    def value(self) -> Any:
        """The job's return value; for a job that yields bytes, all of them joined."""
        parts = []
        while True:
            msg = self._message()
            if msg[:1] != PIECE:
                value = self._final(msg)
                return b"".join(parts) if msg[:1] == DONE else value
            parts.append(msg[1:])

    def abort(self) -> None:
        """End the job now, its worker killed, unless its last message came already."""
        with self._lock:
            if self._done:
                return
            self.aborted = True
        self._worker.kill()
        self._finish(False)

    def _finish(self, reusable: bool) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._pool._give_back(self._worker, reusable)


class _Prepended(Iterator[bytes]):
    """A job's pieces, its first one already read; ``abort`` ends the job from any thread."""

    def __init__(self, head: bytes, rest: Iterator[bytes], job: Job) -> None:
        self._head, self._rest, self.abort = head, rest, job.abort

    def __next__(self) -> bytes:
        if self._head is not None:
            head, self._head = self._head, None
            return head
        return next(self._rest)


class WorkerPool:
    """At most ``size`` worker processes, each started when a job finds none idle."""

    def __init__(self, size: int, timeout_s: float, recycle_bytes: int) -> None:
        methods = mp.get_all_start_methods()
        self._ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        if self._ctx.get_start_method() == "forkserver":
            self._ctx.set_forkserver_preload(PRELOAD)
        self.size, self.timeout_s, self.recycle_bytes = size, timeout_s, recycle_bytes
        self._free = threading.Semaphore(size)
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._all: set[Worker] = set()
        self.jobs = 0  # jobs handed to a worker process, for tests and /metrics
        self.killed = 0  # workers killed: a timeout, an abandoned stream, a lost worker
        self._finalizer = weakref.finalize(self, kill_all, self._all)

    @classmethod
    def of(cls, settings: Any) -> WorkerPool | None:
        """The app's pool from its settings; None when ``heavy_processes`` is 0."""
        if not settings.heavy_processes:
            return None
        timeout, most = settings.heavy_send_timeout_s, settings.heavy_process_bytes
        return cls(settings.heavy_processes, timeout, most)

    def warm(self) -> None:
        """The forkserver started (and the jobs imported in it) now, not on the first heavy
        request; one per server process, so a second app's call costs nothing."""
        if self._ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()

    @property
    def pids(self) -> list[int]:
        with self._lock:
            return [w.proc.pid for w in self._all if w.proc.pid is not None]

    @property
    def busy(self) -> int:
        with self._lock:
            return len(self._all) - len(self._idle)

    def close(self) -> None:
        """Every worker killed (the server's lifespan ended). A later job starts fresh ones:
        an app may be served again (a test client's second lifespan)."""
        with self._lock:
            workers, idle, self._idle = list(self._all), self._idle, []
            self._all.clear()
        for w in workers:
            w.kill()
        for w in idle:  # a busy one is reaped by its reader, which sees its pipe end
            reap(w)

    def submit(
        self, fn: Callable[..., Any], *args: Any, blobs: Sequence[bytes] | None = None
    ) -> Job:
        """``fn(*args)`` (``fn(*args, blobs)`` when blobs are given) sent to a worker; waits
        for a free one at most ``timeout_s``. Call from a thread, never the event loop."""
        # Pickled before a worker is taken: what cannot be pickled fails here, harmlessly.
        header = ForkingPickler.dumps((fn, args, None if blobs is None else len(blobs)))
        if not self._free.acquire(timeout=self.timeout_s):
            raise JobTimeout(f"no heavy worker came free in {self.timeout_s:g} s")
        try:
            worker = self._checkout()
        except BaseException:
            self._free.release()
            raise
        try:
            worker.conn.send_bytes(header)
            for blob in blobs or ():
                worker.conn.send_bytes(blob)
        except BaseException:
            self._give_back(worker, False)  # half a job sent: that worker is done for
            raise
        with self._lock:
            self.jobs += 1
        return Job(self, worker)

    def call(self, fn: Callable[..., Any], *args: Any, blobs: Sequence[bytes] | None = None) -> Any:
        """``submit`` and wait for the value (a streamed job's pieces joined)."""
        return self.submit(fn, *args, blobs=blobs).value()

    def _checkout(self) -> Worker:
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.proc.is_alive():
                    return w
                self._drop(w)
            w = Worker(self._ctx)
            self._all.add(w)
            return w

    def _give_back(self, worker: Worker, reusable: bool) -> None:
        keep = reusable and worker.rss() <= self.recycle_bytes
        with self._lock:
            if keep and worker in self._all:  # not closed meanwhile
                self._idle.append(worker)
            else:
                self.killed += not reusable
                self._drop(worker)
        if not keep:
            worker.kill()
            # Reaped by a thread of its own: a killed child exits within milliseconds, but
            # the reader that gave it back must not wait on it.
            threading.Thread(target=reap, args=(worker,), daemon=True).start()
        self._free.release()

    def _drop(self, worker: Worker) -> None:
        # Caller holds the lock.
        self._all.discard(worker)


def pool_board(pool: WorkerPool | None) -> tuple[Callable[[], Any], ...]:
    """FidelityBoard's arguments: its rows (~2 s of evaluate calls) computed in ``pool``."""
    if pool is None:
        return ()
    from app.core.fidelity import fit

    return (partial(pool.call, fit.board_rows),)
