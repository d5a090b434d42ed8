"""Stragglers over a whole run, from each rank's medians over its steps (issue 25).

The window analysis (app/core/traces/stragglers.py) reads every record of a few steps; a
whole run is read by a columnar engine (app/live/actions_query.py), which hands over one
figure per rank and phase: the median over the run's steps of the rank's per-step compute
(F/B/W less the waits nested in them), TP, DP and receive-wait time, and step time. The
rules are the window analysis's, applied to those medians:

    excess(rank) = median_steps(compute) - median over its stage's ranks of the same

a slow rank when its compute is over its stage's by more than ``threshold``; a slow link
when a group's mean collective (or receive) time is over its axis's median group by as
much, none of its members a slow rank; an excess under ``floor`` of the median step time
names nobody. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median

from app.core.layout.topology import Layout
from app.core.traces.stragglers import Straggler

PHASES = ("compute", "tp", "dp", "pp_wait", "step")
LINKS = (("tp", "tp"), ("dp", "dp"), ("pp", "pp_wait"))  # axis -> the phase it waits in

Medians = Mapping[int, Mapping[str, float]]  # rank -> phase -> median seconds over steps


def find_run_stragglers(
    medians: Medians, layout: Layout, threshold: float = 0.2, floor: float = 0.1
) -> list[Straggler]:
    """Slow ranks and slow links of a run from per-rank medians, largest excess first."""
    if not medians:
        return []
    least = floor * median(m["step"] for m in medians.values())
    ranks = _slow_ranks(medians, layout, threshold)
    slowed = {r for s in ranks for r in s.ranks}
    links = [s for s in _slow_links(medians, layout, threshold) if not slowed & set(s.ranks)]
    return sorted((s for s in ranks + links if s.excess_s > least), key=lambda s: -s.excess_s)


def _ratio(own: float, base: float) -> float:
    return own / base if base > 0 else float("inf")


def _slow_ranks(medians: Medians, layout: Layout, threshold: float) -> list[Straggler]:
    out = []
    for stage in range(layout.pp):
        ranks = [r for r in layout.ranks_of_stage(stage) if r in medians]
        if len(ranks) < 2:
            continue  # a rank alone on its stage has no peer to be slow against
        mid = median(medians[r]["compute"] for r in ranks)
        for r in ranks:
            own = medians[r]["compute"]
            if _ratio(own, mid) > 1 + threshold:
                out.append(Straggler("rank", "compute", (r,), own - mid, _ratio(own, mid)))
    return out


def _slow_links(medians: Medians, layout: Layout, threshold: float) -> list[Straggler]:
    out = []
    for axis, phase in LINKS:
        if layout.size(axis) < 2:
            continue
        groups = layout.groups(axis)
        means = {}
        for i, g in enumerate(groups):
            seen = [medians[r][phase] for r in g if r in medians]
            if seen:
                means[i] = sum(seen) / len(seen)
        if len(means) < 2:
            continue
        mid = median(means.values())
        for i, own in means.items():
            if _ratio(own, mid) > 1 + threshold:
                out.append(Straggler("link", phase, tuple(groups[i]), own - mid, _ratio(own, mid)))
    return out
