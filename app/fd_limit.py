"""The file-descriptor budget the server runs within (issue 13: 1,100 slow connections
against a limit of 1,024 filled the disk with EMFILE lines).

``fd_budget`` raises the soft RLIMIT_NOFILE to the hard limit and keeps a reserve for the
server's own files; the rest is the connection cap. uvicorn's ``limit_concurrency`` answers
requests over the cap with 503, but a connection that never sends a request keeps its
descriptor, and once accept() fails with EMFILE asyncio logs it hundreds of thousands of
times a second (Python 3.11 asyncio/selector_events.py: the accept loop goes on after the
error). ``capped_protocol`` therefore also closes a connection over the cap the moment it is
accepted, so descriptors never run out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from dataclasses import dataclass

# uvicorn's line for a request refused at limit_concurrency (uvicorn/protocols/http/*_impl.py)
CAP_MESSAGE = "Exceeded concurrency limit."
# asyncio's line when accept() fails with EMFILE/ENFILE (asyncio/selector_events.py)
ACCEPT_MESSAGE = "socket.accept() out of system resource"
_REFUSAL = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


@dataclass(frozen=True)
class FdBudget:
    soft: int  # the open-file limit after raising it
    hard: int
    before: int  # the soft limit the process started with
    reserve: int  # descriptors kept for SQLite, static files, logs, the listener
    cap: int  # concurrent connections served (uvicorn's limit_concurrency)

    def explanations(self, interval_s: float) -> dict[str, str]:
        """What the log says, once, instead of the first cap or EMFILE line."""
        fix = f"raise it with `ulimit -n` (hard limit {self.hard}) before `meshscope serve`"
        repeats = f"Repeats are summarised every {interval_s:.0f} s."
        cap = (
            f"meshscope: connection cap reached: {self.cap} connections are open, the "
            f"open-file limit {self.soft} minus {self.reserve} kept for the database and "
            f"files. New connections get 503 until some close; {fix}. {repeats}"
        )
        accept = (
            f"meshscope: out of file descriptors (limit {self.soft}): new connections wait "
            f"in the kernel's queue and are accepted again each second; {fix}. {repeats}"
        )
        return {CAP_MESSAGE: cap, ACCEPT_MESSAGE: accept}


def reserve_for(soft: int) -> int:
    """Descriptors the server needs beside its connections: SQLite's 3 per connection (db,
    -wal, -shm) for the writer and each reader thread, static files in flight, the log
    streams, the listener and epoll. An eighth of the limit, at least 64, at most 1024."""
    return min(max(soft // 8, 64), 1024)


def fd_budget(getrlimit=resource.getrlimit, setrlimit=resource.setrlimit) -> FdBudget:
    """Raise the soft RLIMIT_NOFILE to the hard limit (where the OS lets us), then cap
    connections below it so the server's own files always have descriptors left."""
    before, hard = getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(before, 1 << 20)
    soft = before
    if target > before:
        try:
            setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # macOS refuses above OPEN_MAX: keep what we have
            soft = before
    reserve = reserve_for(soft)
    return FdBudget(soft, hard, before, reserve, max(soft - reserve, 1))


def capped_protocol(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """``base`` (uvicorn's HTTP protocol) that answers 503 and closes a connection accepted
    while ``limit_concurrency`` connections are open, before it waits for any request."""

    class Capped(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            over = self.limit_concurrency is not None and (
                len(self.connections) >= self.limit_concurrency
            )
            super().connection_made(transport)
            if over:
                logging.getLogger("uvicorn.error").warning(CAP_MESSAGE)
                transport.write(_REFUSAL)
                transport.close()  # its descriptor is free again at once

    Capped.__name__ = Capped.__qualname__ = f"Capped{base.__name__}"
    return Capped
