"""Core speed, side by side with torch's schedule generator, in one run.

    python bench/bench_core.py [--quick]

For interleaved 1F1B at several sizes up to p=64, m=512, v=4 it prints, measured in the same
process one after the other:

* meshscope: ``schedules.build`` alone; build + ``simulate`` (every action's start and end,
  makespan, bubble, peak in flight); and that plus ``Timeline.events``, the one Event object
  per action that the flow view and traces read (made on first use, so the planner and
  sweeps, which read only the summary, do not pay for it);
* torch's order generation alone: ``ScheduleInterleaved1F1B._calculate_single_rank_operations``
  for every rank, what the schedule class computes into ``pipeline_order`` before it lowers
  the orders to send/recv (torch/distributed/pipelining/schedules.py);
* torch's ``_schedule_visualizer.get_schedule_ops``: the class built from scratch, lowering
  included (orders only, no timing).

Ratios are torch's time over meshscope's build + simulate (> 1: meshscope is faster).
Target at p=64, m=512, v=4: build + simulate <= torch's order generation alone.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.schedules import build  # noqa: E402
from app.core.simulate import Durations, simulate  # noqa: E402

SIZES = [(8, 32, 2), (16, 128, 2), (32, 256, 4), (64, 512, 4)]
QUICK = [(8, 32, 2), (16, 64, 2)]
COSTS = Durations(1, 2, 0, 0.1)


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time with the collector paused for both sides, as app.core pauses it (a
    collection scanning torch's lowered orders would otherwise be charged to its loop)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return min(times)


def ours(p: int, m: int, v: int) -> tuple[float, float, float]:
    """(build, build + simulate, build + simulate + events) seconds, best of 3."""
    built = best_of(lambda: build("interleaved", p, m, v), 3)
    both = best_of(lambda: simulate("interleaved", build("interleaved", p, m, v), COSTS, v), 3)
    events = best_of(
        lambda: simulate("interleaved", build("interleaved", p, m, v), COSTS, v).events, 3
    )
    return built, both, events


def torch_schedule(p: int, m: int, v: int):
    """torch's ScheduleInterleaved1F1B over mock stages, as get_schedule_ops builds it."""
    from unittest import mock

    from torch.distributed.pipelining.schedules import ScheduleInterleaved1F1B
    from torch.distributed.pipelining.stage import PipelineStage

    stage = mock.create_autospec(PipelineStage, instance=True)
    stage.group_rank, stage.group_size, stage.submod = 0, p, None
    stage.num_stages = p * v
    return ScheduleInterleaved1F1B([stage] * v, m)


def theirs(p: int, m: int, v: int) -> tuple[float, float]:
    """(order generation alone, get_schedule_ops) seconds."""
    from torch.distributed.pipelining import _schedule_visualizer as vis

    sched = torch_schedule(p, m, v)
    order = best_of(lambda: [sched._calculate_single_rank_operations(r) for r in range(p)], 3)
    whole = best_of(lambda: vis.get_schedule_ops("Interleaved1F1B", p, m, v), 1)
    return order, whole


def row(p: int, m: int, v: int, with_torch: bool) -> str:
    built, both, events = ours(p, m, v)
    cells = f"{p:>3} {m:>4} {v:>2} | {built * 1e3:8.1f} {both * 1e3:9.1f} {events * 1e3:8.1f}"
    if not with_torch:
        return cells
    order, whole = theirs(p, m, v)
    return (
        f"{cells} | {order * 1e3:9.1f} {whole * 1e3:10.1f} | "
        f"{order / both:8.2f}x {order / events:8.2f}x {whole / both:9.1f}x"
    )


def main() -> None:
    try:
        import torch.distributed.pipelining  # noqa: F401

        with_torch = True
    except ImportError:
        with_torch = False
        print("torch not installed: meshscope's times only")
    print("interleaved 1F1B, times in ms (best of 3; get_schedule_ops once)")
    head = "  p    m  v |    build  build+sim  +events"
    if with_torch:
        head += " | torch ord  get_sc_ops | ord/ours ord/+evs  get/ours"
    print(head)
    for p, m, v in QUICK if "--quick" in sys.argv else SIZES:
        print(row(p, m, v, with_torch), flush=True)
    print("target at p=64 m=512 v=4: ord/ours >= 1 (build + simulate <= torch order alone)")


if __name__ == "__main__":
    main()
