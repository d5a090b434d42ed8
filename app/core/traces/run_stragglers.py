"""Stragglers over a whole run, from each rank's medians over its steps (issue 25).

The window analysis (app/core/traces/stragglers.py) reads every record of a few steps; a
whole run is read by a columnar engine (app/live/actions_query.py), which hands over one
figure per rank and phase: the median over the run's steps of the rank's per-step compute
(F/B/W less the waits nested in them), TP, DP, receive-wait, CP and EP time, and step
time (a run without cp or ep has 0 there, and no group of those axes to compare). The
rules are the window analysis's, applied to those medians:

    excess(rank) = median_steps(compute) - median over its stage's ranks of the same

a slow rank when its compute is over its stage's by more than ``threshold``; a slow link
when a group's mean collective (or receive) time is over its axis's median group by as
much, none of its members a slow rank; an excess under ``floor`` of the median step time
names nobody. Pure: no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from app.core.layout.topology import Layout
from app.core.traces.stragglers import Straggler, from_phase_times

Medians = Mapping[int, Mapping[str, float]]  # rank -> phase -> median seconds over steps


def find_run_stragglers(
    medians: Medians, layout: Layout, threshold: float = 0.2, floor: float = 0.1
) -> list[Straggler]:
    """Slow ranks and slow links of a run from per-rank medians, largest excess first: the
    window analysis's own rules on one step whose phase times are the medians (over one
    step its median excess is the excess and its ratio the ratio)."""
    times = {(0, r): defaultdict(float, m) for r, m in medians.items()}
    return from_phase_times(times, layout, threshold, floor)
