"""Step timers: every action and collective becomes an interval relative to the step start.

Three implementations share one interface (``begin_step``, ``start``/``stop``, ``span``,
``finish``, ``interrupted``):

- ``CpuTimer``: ``perf_counter`` for wall time plus ``thread_time`` for the CPU the calling
  thread used inside the interval. On CPU autograd runs the backward on the calling thread
  and gloo waits block, so ``cpu << end - start`` shows waiting or a core shared with other
  ranks (4-8 ranks on 2 cores here).
- ``CudaTimer``: a pair of CUDA events per interval on the current stream; nothing is read
  until ``finish``, which synchronises once per step.
- ``NullTimer``: records nothing, for the timing-overhead benchmark.

``action`` holds the (microbatch, chunk) of the pipeline action in progress so nested
intervals (the TP all-reduces inside a forward) are labelled with it.

With ``ranges`` set (``--profile``), ``span`` and ``range`` also open a torch.profiler
``record_function`` range named as the schedule's action (``F3.0``: kind, microbatch, chunk;
``optimizer``) or as the caller says (a collective's ``tp all_reduce ranks=[0, 1]``), so a
Kineto trace of the run tells the actions apart (app/core/traces/classify.py reads them).

``interrupted`` is ``finish`` for a step that failed: the intervals still open (the
collective or receive that failed, left open when it raised) are closed now, so the one
that ends last is what the rank was doing. It never waits on the device: after a failed
collective a synchronisation may never return, so the CUDA timer reads its host-side marks
(when each interval was issued and when the host saw it end) instead of its events.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from torch.profiler import record_function


@dataclass
class Span:
    kind: str
    microbatch: int | None
    chunk: int | None
    peer: int | None
    start: Any = None
    end: Any = None
    cpu_start: float | None = None
    cpu_end: float | None = None
    host_start: float | None = None  # CudaTimer: perf_counter() when issued, for interrupted()
    host_end: float | None = None


class _Timer:
    def __init__(self) -> None:
        self.action: tuple[int | None, int | None] = (None, None)
        self.spans: list[Span] = []
        self.t0_wall = 0.0
        self.ranges = False  # --profile: name spans as record_function ranges

    def start(
        self, kind: str, microbatch: int | None = None, chunk: int | None = None, peer=None
    ) -> Span:
        if microbatch is None and chunk is None and kind in ("tp", "pp_send", "pp_recv"):
            microbatch, chunk = self.action
        span = Span(kind, microbatch, chunk, peer)
        self._mark(span, "start")
        self.spans.append(span)
        return span

    def stop(self, span: Span) -> None:
        self._mark(span, "end")

    @contextmanager
    def span(self, kind: str, microbatch=None, chunk=None, peer=None):
        with self.range(range_name(kind, microbatch, chunk)):
            s = self.start(kind, microbatch, chunk, peer)
            try:
                yield s
            finally:
                self.stop(s)

    def range(self, name: str | None):
        """A record_function range when profiling, else nothing."""
        return record_function(name) if self.ranges and name else nullcontext()

    def begin_step(self) -> None:
        self.spans = []
        self.action = (None, None)
        self.t0_wall = time.time()

    def finish(self) -> list[dict]:
        raise NotImplementedError

    def interrupted(self) -> list[dict]:
        """The failed step's intervals, the open ones closed now (see the module docstring)."""
        raise NotImplementedError

    def _mark(self, span: Span, which: str) -> None:
        raise NotImplementedError


class CpuTimer(_Timer):
    def begin_step(self) -> None:
        super().begin_step()
        self._t0 = time.perf_counter()

    def _mark(self, span: Span, which: str) -> None:
        setattr(span, f"cpu_{which}", time.thread_time())
        setattr(span, which, time.perf_counter())

    def finish(self) -> list[dict]:
        return [
            _event(s, s.start - self._t0, s.end - self._t0, s.cpu_end - s.cpu_start)
            for s in self.spans
            if s.end is not None
        ]

    def interrupted(self) -> list[dict]:
        for s in self.spans:
            if s.end is None:
                self._mark(s, "end")
        return self.finish()


class CudaTimer(_Timer):
    def begin_step(self) -> None:
        super().begin_step()
        self._t0 = self._record()
        self._host_t0 = time.perf_counter()

    @staticmethod
    def _record() -> torch.cuda.Event:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def _mark(self, span: Span, which: str) -> None:
        setattr(span, which, self._record())
        setattr(span, f"host_{which}", time.perf_counter())

    def interrupted(self) -> list[dict]:
        now = time.perf_counter()
        return [
            _event(s, s.host_start - self._host_t0, (s.host_end or now) - self._host_t0, None)
            for s in self.spans
            if s.host_start is not None
        ]

    def finish(self) -> list[dict]:
        last = self._record()
        last.synchronize()  # the one host-device sync per step
        ms = self._t0.elapsed_time
        return [
            _event(s, max(ms(s.start), 0.0) / 1e3, max(ms(s.end), 0.0) / 1e3, None)
            for s in self.spans
            if s.end is not None
        ]


class NullTimer(_Timer):
    def __init__(self) -> None:
        super().__init__()
        self._span = Span("F", None, None, None)  # handed out, never read

    def start(self, kind, microbatch=None, chunk=None, peer=None) -> Span:
        return self._span

    def stop(self, span: Span) -> None:
        pass

    def finish(self) -> list[dict]:
        return []

    def interrupted(self) -> list[dict]:
        return []


def _event(s: Span, start: float, end: float, cpu: float | None) -> dict:
    event = {"kind": s.kind, "microbatch": s.microbatch, "chunk": s.chunk}
    event.update(start=start, end=max(end, start))
    if s.peer is not None:
        event["peer"] = s.peer
    if cpu is not None:
        event["cpu"] = max(cpu, 0.0)
    return event


def range_name(kind: str, microbatch: int | None, chunk: int | None) -> str | None:
    """The trace range of a span: F/B/W as the schedules' compact actions (F3.0), optim as
    ``optimizer``; None for the kinds that are not ranges (collectives are named by callers)."""
    if kind in ("F", "B", "W") and microbatch is not None:
        return f"{kind}{microbatch}.{chunk or 0}"
    return "optimizer" if kind == "optim" else None


def make_timer(enabled: bool, device: torch.device) -> _Timer:
    if not enabled:
        return NullTimer()
    return CudaTimer() if device.type == "cuda" else CpuTimer()
