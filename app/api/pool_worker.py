"""A heavy worker process's side of app/api/pool.py: jobs in, answers out, until the pipe
closes. Every message back starts with a tag byte: a piece of a streamed answer (raw bytes,
never pickled), or the job's last word: its pickled value, its pickled error, or done."""

from __future__ import annotations

import gc
import os
import pickle
from collections.abc import Iterator
from typing import Any

# Message tags, the first byte of every message a worker sends back.
PIECE, VALUE, ERROR, DONE = b"P", b"V", b"E", b"D"


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
