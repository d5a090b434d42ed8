"""A heavy worker process of app/api/pool.py: the server's handle on it (``Worker``) and its
own life (``serve``): jobs in, answers out, until the pipe closes. Every message back starts
with a tag byte: a piece of a streamed answer (raw bytes, never pickled), or the job's last
word: its pickled value, its pickled error, or done."""

from __future__ import annotations

import gc
import os
import pickle
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

# Message tags, the first byte of every message a worker sends back.
PIECE, VALUE, ERROR, DONE = b"P", b"V", b"E", b"D"
PAGE = 4096  # /proc/<pid>/statm counts pages
# Workers run this much nicer than the server: on a box with every core busy, its event loop
# (and /healthz) comes before heavy work (bench/bench_heavy.py on 2 shared cores).
NICENESS = 10


def _rebuild(cls: type[BaseException], args: tuple, state: dict) -> BaseException:
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def _pickled_error(exc: BaseException) -> bytes:
    """The exception as the parent can raise it: the same class and fields, rebuilt without
    its ``__init__`` (CompareError's takes issues, not the message its args hold)."""
    try:
        data = pickle.dumps((_rebuild, (type(exc), exc.args, dict(vars(exc)))))
        pickle.loads(data)  # nothing the parent could not load either
        return data
    except Exception:
        return pickle.dumps((RuntimeError, (f"{type(exc).__name__}: {exc}",)))


def serve(conn: Any, niceness: int = 0) -> None:
    """A worker's whole life: jobs in, answers out, until the pipe closes. ``niceness``: the
    worker yields the CPU to the server (its event loop answers /healthz and light requests)
    when the cores are all busy; with a core to spare it changes nothing."""
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)
    while True:
        try:
            fn, args, nblobs = conn.recv()
        except (EOFError, OSError):
            return
        blobs = [conn.recv_bytes() for _ in range(nblobs or 0)]
        # The collector off during a job (app/core/support/gc_pause.py: millions of acyclic
        # objects), one collection after it.
        gc.disable()
        try:
            out = fn(*args, blobs) if nblobs is not None else fn(*args)
            if isinstance(out, Iterator):
                for piece in out:
                    conn.send_bytes(PIECE + piece)
                conn.send_bytes(DONE)
            else:
                conn.send_bytes(VALUE + pickle.dumps(out))
        except Exception as exc:
            conn.send_bytes(ERROR + _pickled_error(exc))
        finally:
            del blobs
            gc.enable()
            gc.collect()


class Worker:
    """The server's handle on one worker process and the pipe to it."""

    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=serve, args=(child, NICENESS), daemon=True, name="meshscope-heavy"
        )
        self.proc.start()
        child.close()

    def rss(self) -> int:
        try:
            return int(Path(f"/proc/{self.proc.pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            return 0

    def kill(self) -> None:
        # From any thread: a reader blocked on the pipe then sees EOF. The pipe is closed by
        # whoever holds the worker, never under a reader's feet.
        with suppress(OSError, ValueError):
            self.proc.kill()


def kill_all(workers: set[Worker]) -> None:
    for w in list(workers):
        w.kill()


def reap(worker: Worker) -> None:
    worker.proc.join(timeout=10)
    with suppress(OSError):
        worker.conn.close()
