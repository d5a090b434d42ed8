"""Bounded logs under a flood of identical lines.

At the open-file limit the same error repeats hundreds of thousands of times a second, and
a line (or a traceback) for each filled 703 MB of disk in 15 s (issue 13). ``RepeatFilter``
lets the first record of each call site through, then one summary per interval saying how
many were held back. ``Explain`` replaces the first line of a known kind (the connection
cap, EMFILE: app/fd_limit.py) with what is happening and what to do.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from uvicorn.config import LOGGING_CONFIG

MAX_SITES = 1024  # call sites remembered; the oldest is forgotten first


@dataclass
class _Run:
    since: float  # when this window opened
    held: int = 0  # records dropped in it


class RepeatFilter(logging.Filter):
    """First record per call site (logger, level, file, line, exception type) passes; the
    rest within ``interval_s`` are dropped and counted, and the next one after the interval
    passes once with that count and without its traceback. Records below ``min_level``
    (the access log, info lines) always pass: they are one per request by design."""

    def __init__(
        self,
        interval_s: float = 10.0,
        min_level: int = logging.WARNING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.interval_s, self.min_level, self.clock = interval_s, min_level, clock
        self._runs: OrderedDict[tuple, _Run] = OrderedDict()
        self._lock = threading.Lock()  # handlers are called from many threads

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < self.min_level:
            return True
        exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, record.levelno, record.pathname, record.lineno, exc)
        now = self.clock()
        with self._lock:
            run = self._runs.get(key)
            if run is None:
                self._remember(key, now)
                return True
            if now - run.since < self.interval_s:
                run.held += 1
                return False
            held, elapsed = run.held, now - run.since
            run.since, run.held = now, 0
        if held:
            _summarise(record, held, elapsed)
        return True

    def _remember(self, key: tuple, now: float) -> None:
        self._runs[key] = _Run(now)
        while len(self._runs) > MAX_SITES:
            self._runs.popitem(last=False)

    def held(self) -> int:
        """Records dropped and not yet reported in a summary line."""
        with self._lock:
            return sum(run.held for run in self._runs.values())


def _summarise(record: logging.LogRecord, held: int, elapsed: float) -> None:
    # The first of the run carried the traceback; the summary is one line.
    record.msg = f"{record.getMessage()} [and {held} more like this in the last {elapsed:.0f} s]"
    record.args = None
    record.exc_info, record.exc_text, record.stack_info = None, None, None


class Explain(logging.Filter):
    """Rewrites the first record whose message starts with a known prefix into a plain
    explanation (once per prefix, per process); later ones pass unchanged."""

    def __init__(self, explanations: dict[str, str]) -> None:
        super().__init__()
        self._pending = dict(explanations)
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._pending or record.levelno < logging.WARNING:
            return True
        text = record.getMessage()
        with self._lock:
            prefix = next((p for p in self._pending if text.startswith(p)), None)
            if prefix is None:
                return True
            record.msg, record.args = self._pending.pop(prefix), None
        record.exc_info, record.exc_text = None, None
        return True


def uvicorn_log_config(explanations: dict[str, str], interval_s: float = 10.0) -> dict:
    """uvicorn's own logging config (uvicorn/config.py LOGGING_CONFIG) with both filters on
    every handler, plus a root handler for asyncio and meshscope.* in place of logging's
    unfiltered last resort; pass it as ``uvicorn.run(log_config=...)``."""
    repeat, explain = RepeatFilter(interval_s), Explain(explanations)
    config = copy.deepcopy(LOGGING_CONFIG)
    # Order matters: RepeatFilter keys the record before Explain rewrites it.
    config["filters"] = {"repeat": {"()": lambda: repeat}, "explain": {"()": lambda: explain}}
    config["formatters"]["root"] = {"format": "%(levelname)s %(name)s: %(message)s"}
    config["handlers"]["root"] = {
        "class": "logging.StreamHandler", "stream": "ext://sys.stderr",
        "formatter": "root", "level": "WARNING",  # what the last resort printed before
    }  # fmt: skip
    for handler in config["handlers"].values():
        handler["filters"] = ["repeat", "explain"]
    config["root"] = {"handlers": ["root"], "level": "WARNING"}
    return config
