"""Activation memory over one step, per pipeline stage, read off the simulated timeline.

Each forward stores its chunk's activations for one micro-batch while it runs; each backward
(the input-gradient pass B, when the backward is split) frees them while it runs, as
app/core/simulate/timeline.py:_peak_inflight counts them (W keeps only small per-layer inputs
there).
A forward-only schedule keeps no autograd graph, so its forward frees as it ends. The line's
top is therefore peak in-flight x per-micro-batch activation bytes (peak_held with unequal
chunks): the activation part of the peak stack (app/core/cost/memory.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.simulate import Event

# All lines together keep about this many points (two per action), at least MIN_POINTS per
# stage: a deep, long pipeline is thinned evenly, always keeping each peak, so the page's
# JSON stays a few hundred KB at most.
MAX_POINTS = 8000
MIN_POINTS = 100


def stage_points(
    events: Sequence[Event], stage: int, per_mb: Sequence[float], forward_only: bool
) -> list[tuple[float, float]]:
    """(time, activation bytes held) at each action's start and end on ``stage``;
    ``per_mb[chunk]`` is one micro-batch's activations of that chunk."""
    held, points = 0.0, [(0.0, 0.0)]
    for e in events:
        if e.stage != stage or e.kind == "W":
            continue
        points.append((e.start, held))
        if e.kind == "F":
            held += per_mb[e.chunk]
            points.append((e.end, held))
            if forward_only:  # no graph kept: the forward's activations go as it ends
                held -= per_mb[e.chunk]
                points.append((e.end, held))
        else:  # B consumes the activations its forward stored
            held -= per_mb[e.chunk]
            points.append((e.end, max(held, 0.0)))
    return points


def thin(points: list[tuple[float, float]], limit: int = MAX_POINTS) -> list[tuple[float, float]]:
    """Every k-th point, plus the first, the last and the peak, in time order."""
    if len(points) <= limit:
        return points
    k = -(-len(points) // limit)  # ceil: the stride between kept points
    top = max(range(len(points)), key=lambda i: points[i][1])
    keep = set(range(0, len(points), k)) | {0, len(points) - 1, top}
    return [points[i] for i in sorted(keep)]


def memory_timeline(
    events: Sequence[Event],
    per_mb: Sequence[Sequence[float]],
    forward_only: bool,
    makespan: float,
) -> list[dict[str, object]]:
    """One line per pipeline stage: times, activation bytes, and the line's peak;
    ``per_mb[stage][chunk]`` is one micro-batch's activations of that chunk."""
    out, limit = [], max(MIN_POINTS, MAX_POINTS // max(1, len(per_mb)))
    for stage, sizes in enumerate(per_mb):
        points = stage_points(events, stage, sizes, forward_only)
        points.append((makespan, points[-1][1]))
        peak = max(v for _, v in points)
        shown = thin(points, limit)
        out.append({
            "stage": stage,
            "t": [p[0] for p in shown],
            "bytes": [p[1] for p in shown],
            "peak_bytes": peak,
            "per_microbatch_bytes": list(sizes),
        })  # fmt: skip
    return out
