"""Core speed, side by side with torch's schedule generator, in one run.

    python bench/bench_core.py

Prints the time to build + simulate p=64, m=512, v=4 interleaved with app.core and the
time torch.distributed.pipelining takes to generate the same order, their ratio, and the
core's scaling over m = 64..1024. Target: < 1 s and faster than torch.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.schedules import build  # noqa: E402
from app.core.simulate import Durations, simulate  # noqa: E402


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def ours(p: int, m: int, v: int) -> None:
    simulate("interleaved", build("interleaved", p, m, v), Durations(1, 2, 0, 0.1), v)


def theirs(p: int, m: int, v: int) -> None:
    from torch.distributed.pipelining import _schedule_visualizer as vis

    vis.get_schedule_ops("Interleaved1F1B", p, m, v)


def main() -> None:
    p, m, v = 64, 512, 4
    core_s = _best_of(lambda: ours(p, m, v), 3)
    print(f"p={p} m={m} v={v} interleaved")
    print(f"  app.core build+simulate : {core_s:8.3f} s")
    try:
        torch_s = _best_of(lambda: theirs(p, m, v), 1)
        print(f"  torch get_schedule_ops  : {torch_s:8.3f} s (order only, no timing)")
        print(f"  ratio torch / core      : {torch_s / core_s:8.1f}x")
    except ImportError:
        print("  torch not installed: no side-by-side")
    print("core scaling over m (p=64, v=4):")
    base = None
    for mm in (64, 128, 256, 512, 1024):
        s = statistics.median(_best_of(lambda mm=mm: ours(p, mm, v), 1) for _ in range(3))
        base = base or s / mm
        print(f"  m={mm:5d}: {s:7.3f} s  ({s / mm / base:4.2f}x the per-microbatch cost at m=64)")


if __name__ == "__main__":
    main()
