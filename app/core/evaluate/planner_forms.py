"""The planner's closed forms: a candidate's makespan and peak in-flight micro-batches without
simulating it (tests/core/test_simulate.py, test_schedules_zb.py and test_planner_siblings.py
check each against the simulator). A candidate is read by its pp, v and schedule only."""

from __future__ import annotations

from typing import Any

from app.core.simulate import Durations

# Split-backward schedules as 1F1B plus more warm-up and W lag (schedules_zb.deferred_w):
# rank i's (warm-up, lag) = k * (p-1-i, i). Qi et al. 2024 §3.1: ZB-H1 k = 1, ZB-H2 k = 2.
DEFERRED_W = {"zb-h1": 1, "zb-h2": 2}


def peak_inflight(c: Any, micro: int) -> list[int]:
    """Closed forms the simulator's tests check: 1F1B min(p-i, m), GPipe m, interleaved
    torch's warm-up (v-1)p + 2(p-1-i) + 1 capped at m*v."""
    p = c.pp
    if c.schedule in ("gpipe", "looped-bfs"):  # every forward held until the backwards
        return [micro * c.v] * p
    if c.schedule == "interleaved":
        return [min((c.v - 1) * p + 2 * (p - 1 - i) + 1, micro * c.v) for i in range(p)]
    if c.schedule == "zb-h2":  # Qi et al. 2024 §3.1: 2p-1 on stage 0, two fewer per stage
        return [min(2 * (p - 1 - i) + 1, micro) for i in range(p)]
    return [min(p - i, micro) for i in range(p)]


def frontier(c: Any, micro: int, layers: list[list[int]]) -> list[list[tuple[int, int]]] | None:
    """memory.held_frontier's (F-to-B, B-to-W) peaks of a split-backward schedule, in closed
    form (tests/core/test_schedules_zb.py checks it against the simulated orders)."""
    if c.schedule not in DEFERRED_W:
        return None
    k = DEFERRED_W[c.schedule]
    return [
        [(f * n, w * n) for f, w in held_points(k * (c.pp - 1 - i), k * i, micro)]
        for i, (n,) in enumerate(layers)
    ]


def held_points(warmup: int, lag: int, m: int) -> list[tuple[int, int]]:
    """Where deferred_w(warmup, lag) can peak: after the warm-up, the last steady F and its B
    (at most ``lag`` W's waiting), and in the drain the first B, the B that reaches lag + 1
    waiting W's, and the last B."""
    w = min(warmup, m)
    points = [(w, 0)]
    if m > w:
        j = min(m - w - 1, lag)
        points += [(w + 1, j), (w, j + 1)]
    for k in {1, min(max(1, lag + 1 - (m - w)), w), w}:
        if 1 <= k <= w:
            points.append((w - k, min(m - w + k, lag + 1)))
    return points


def makespan(c: Any, micro: int, d: Durations) -> float:
    p, f, b, w = c.pp, d.f, d.b, d.w
    hops = 2 * (p - 1) * d.p2p
    if c.schedule == "zb-h1":  # Qi et al. 2024 §3.1: m(F+B+W) + (p-1)(F+B-W)
        return micro * (f + b + w) + (p - 1) * (f + b - w) + hops
    if c.schedule == "zb-h2":
        # Qi et al. 2024 §3.1: stage 0 idles (p-1)(F+B-2W) once running, or (p-1)(B-F) for
        # its first B when B > F; the last stage starts (p-1)F late. The largest of the
        # three, exact at m >= 2p-1 (tests/core/test_schedules_zb.py).
        return micro * (f + b + w) + (p - 1) * max(f, f + b - 2 * w, b - f) + hops
    if c.schedule == "looped-bfs":
        # Derived (Lamy-Poirier 2023, arXiv 2211.05953 §3): GPipe's (m + p - 1)(F + B), and
        # each further loop of a chunk waits for its first input to come round the ring,
        # max(m*F, p*(F + p2p)) forward and likewise backward (test_planner_siblings.py).
        fwd, bwd = max(micro * f, p * (f + d.p2p)), max(micro * (b + w), p * (b + w + d.p2p))
        return (c.v - 1) * (fwd + bwd) + (micro + p - 1) * (f + b + w) + hops
    # Narayanan et al. 2021 §2.2: (m*v + p - 1) chunk slots of F + B (B including W).
    return (micro * c.v + p - 1) * (f + b + w) + hops
