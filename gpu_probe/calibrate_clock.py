"""How long ``meshscope calibrate`` measures, and with which clock: a Budget (repeats, their
length, the sweeps' largest sizes) and the median per-call time of a rank's own computation.
CUDA events on a GPU; on a CPU the thread's CPU time, which does not count the time other
processes held the core."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from gpu_probe.collectives import MAX_BYTES_CPU, MAX_BYTES_GPU


@dataclass(frozen=True)
class Budget:
    """How long to measure: repeats per figure, their length, the sweeps' largest sizes."""

    repeats: int = 15
    repeat_ms: float = 2.0
    gemm_max: int = 1024
    max_bytes: int = MAX_BYTES_CPU


def budget(device: torch.device, quick: bool) -> Budget:
    """A CPU sweep stops at 1024 (a 1024^3 GEMM already runs at the core's full rate);
    a GPU's GEMMs fill its SMs only towards 8192. ``quick``: a smoke run (tests)."""
    if quick:
        return Budget(repeats=5, repeat_ms=2.0, gemm_max=256, max_bytes=1 << 20)
    if device.type == "cuda":
        return Budget(repeats=5, repeat_ms=20.0, gemm_max=8192, max_bytes=MAX_BYTES_GPU)
    return Budget()


def per_call_s(fn: Callable[[], object], device: torch.device, b: Budget) -> float:
    """Median seconds per call of ``fn``, a computation on this rank alone. On CPU the clock
    is the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID): what the computation costs the
    core, not the time other processes held it. On the shared 2-core box wall-clock block
    timings moved 15-98 us per launch between runs minutes apart; its CPU time does not
    wait for a core. (Links keep the wall clock: their waiting is what they cost.)"""
    fn()
    clock = time.thread_time if device.type == "cpu" else time.perf_counter
    calls = calls_for(repeat_s(fn, device, 1, clock), b)
    times = [repeat_s(fn, device, calls, clock) / calls for _ in range(b.repeats)]
    return statistics.median(times)


def calls_for(one_s: float, b: Budget) -> int:
    return max(1, min(10_000, math.ceil(b.repeat_ms / 1e3 / max(one_s, 1e-9))))


def one_call_s(fn, device: torch.device) -> float:
    return repeat_s(fn, device, 1)


def repeat_s(fn, device: torch.device, calls: int, clock=time.perf_counter) -> float:
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3
    t0 = clock()
    for _ in range(calls):
        fn()
    return clock() - t0
