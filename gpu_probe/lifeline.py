"""A probe process dies with the process that started it.

``kill -9`` of ``meshscope probe`` runs no handler, so nothing there can stop the launcher
it started, nor the launcher's ranks: they trained and streamed on (issue 26, item 9). Each
child therefore asks the kernel for a parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``,
through ctypes, see prctl(2)): SIGTERM, so the launcher still ends its ranks and each rank
still flushes its reporter. A watchdog thread backs it up where prctl does not exist (or the
signal was lost): once the parent is gone it sends the same signal, and exits hard if the
process is still there ``HARD_EXIT_S`` later.

The check of ``os.getppid()`` after prctl closes the race of a parent that died before
the request: prctl(2) notes the signal is not sent for a parent already gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PARENT_ENV = "GPU_PROBE_PARENT_PID"  # set by `meshscope probe` for the launcher it starts
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_S = 0.5
# After the signal, before a hard exit: the launcher's own grace for its ranks (5 s) plus
# a rank's flush (3 s), with room to spare.
HARD_EXIT_S = 10.0


def parent_from_env() -> int | None:
    """The pid `meshscope probe` left for its launcher; removed so no rank inherits it."""
    value = os.environ.pop(PARENT_ENV, None)
    return int(value) if value and value.isdigit() else None


def die_with_parent(parent: int | None, sig: int = signal.SIGTERM) -> None:
    """From now on, ``sig`` reaches this process when ``parent`` exits (None: nothing)."""
    if parent is None:
        return
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    threading.Thread(target=_watch, args=(parent, sig), name="probe-lifeline", daemon=True).start()
    if os.getppid() != parent:  # it died before prctl: the kernel will not tell us
        os.kill(os.getpid(), sig)


def _watch(parent: int, sig: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.kill(os.getpid(), sig)  # a no-op when prctl's signal already did its work
    time.sleep(HARD_EXIT_S)
    os._exit(128 + sig)
