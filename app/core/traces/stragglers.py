"""Which ranks are slow, in which phase, and whether a rank or a link is to blame.

Ranks of one pipeline stage run the same layers on same-sized microbatches, so each is
compared with the median of its own stage (its DP x TP peers), per step, then the median
over steps is kept so one hiccup names nobody:

    excess(rank, phase) = median over steps of (t(rank, phase) - median over stage peers)

A rank whose compute is over its stage's by more than ``threshold`` is a slow rank (a slow
GPU, a throttled clock, a noisy neighbour). Communication tells a slow link apart: every
member of a collective waits for the last one, so a slow *rank* shows as its own long
compute and its peers' long collectives, while a slow *link* shows as one group's (or one
stage pair's) long collectives or receive waits with every member's compute normal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import median

from app.core.inputs.protocol import ProbeRecord
from app.core.layout.topology import Layout
from app.core.traces import intervals

PHASES = {"F": "compute", "B": "compute", "W": "compute", "tp": "tp", "dp": "dp",
          "pp_recv": "pp_wait", "cp": "cp", "ep": "ep"}  # fmt: skip
# pp_send overlaps compute (measured.py): not a wait; cp and ep sit inside compute as tp does.
WAITS = frozenset({"tp", "dp", "pp_recv", "cp", "ep"})


@dataclass(frozen=True)
class Straggler:
    cause: str  # "rank": slow compute on one rank; "link": slow communication of a group
    phase: str  # compute, tp, dp, pp_wait (cp or ep in a run with them)
    ranks: tuple[int, ...]  # the rank, or the group whose link is slow
    excess_s: float  # median over steps of the time over the stage's (or axis's) median
    ratio: float  # the rank's (group's) time over that median


def _phase_times(records: Iterable[ProbeRecord]) -> dict[tuple[int, int], dict[str, float]]:
    """(step, rank) -> seconds per phase. Compute is F/B/W time not spent in a collective or
    a receive nested inside it (measured.py's priority: tp > dp > pp_wait > compute), so a
    stage that waits inside its forward for its input is not slow, only waiting."""
    out: dict[tuple[int, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for rec in records:
        times = out[(rec.step, rec.rank)]
        waits = intervals.union([(e.start, e.end) for e in rec.events if e.kind in WAITS])
        for e in rec.events:
            phase = PHASES.get(e.kind)
            if phase == "compute":
                times[phase] += (e.end - e.start) - intervals.covered(e.start, e.end, waits)
            elif phase:
                times[phase] += e.end - e.start
        times["step"] = max((e.end for e in rec.events), default=0.0)
    return out


def _excess(values: dict[int, list[float]], peers: dict[int, list[float]]) -> dict[int, tuple]:
    """rank -> (median excess, ratio) from per-step own and peer-median values."""
    out = {}
    for rank, own in values.items():
        diffs = [o - p for o, p in zip(own, peers[rank], strict=True)]
        base = median(peers[rank])
        out[rank] = (median(diffs), (median(own) / base) if base > 0 else float("inf"))
    return out


def find_stragglers(
    records: list[ProbeRecord], layout: Layout, threshold: float = 0.2, floor: float = 0.1
) -> list[Straggler]:
    """Slow ranks (compute over their stage's median by more than ``threshold``) and slow
    links (a group's collective or a stage pair's receive waits over the axis median by as
    much, its members' compute normal), largest excess first. An excess under ``floor`` of
    the median step costs the step little and is left out: on a shared CPU a millisecond
    of scheduling noise is a third of a small rank's compute (the gloo fixture's ranks
    differ by 2.2 ms of a 43 ms step with nobody slow)."""
    return from_phase_times(_phase_times(records), layout, threshold, floor)


def from_phase_times(
    times: Mapping[tuple[int, int], Mapping[str, float]],
    layout: Layout,
    threshold: float = 0.2,
    floor: float = 0.1,
) -> list[Straggler]:
    """``find_stragglers`` on phase seconds per (step, rank) already found: the window's from
    its records, or a whole run's as one step of each rank's medians (run_stragglers.py)."""
    steps = sorted({s for s, _ in times})
    least = floor * median([t["step"] for t in times.values()] or [0.0])
    slow_ranks = _slow_ranks(times, steps, layout, threshold)
    slowed = {r for s in slow_ranks for r in s.ranks}
    links = [s for s in _slow_links(times, steps, layout, threshold) if not slowed & set(s.ranks)]
    return sorted((s for s in slow_ranks + links if s.excess_s > least), key=lambda s: -s.excess_s)


def _slow_ranks(times, steps, layout: Layout, threshold: float) -> list[Straggler]:
    own: dict[int, list[float]] = defaultdict(list)
    peer: dict[int, list[float]] = defaultdict(list)
    for step in steps:
        for stage in range(layout.pp):
            ranks = [r for r in layout.ranks_of_stage(stage) if (step, r) in times]
            if len(ranks) < 2:
                continue  # a rank alone on its stage has no peer to be slow against
            mid = median(times[(step, r)]["compute"] for r in ranks)
            for r in ranks:
                own[r].append(times[(step, r)]["compute"])
                peer[r].append(mid)
    return [
        Straggler("rank", "compute", (r,), ex, ratio)
        for r, (ex, ratio) in _excess(own, peer).items()
        if ratio > 1 + threshold
    ]


def _slow_links(times, steps, layout: Layout, threshold: float) -> list[Straggler]:
    """Per axis, each group's mean collective (or receive) time against the axis median."""
    out = []
    for axis, phase in (("tp", "tp"), ("dp", "dp"), ("pp", "pp_wait"), ("cp", "cp"), ("ep", "ep")):
        if layout.size(axis) < 2:
            continue
        own: dict[int, list[float]] = defaultdict(list)
        peer: dict[int, list[float]] = defaultdict(list)
        groups = layout.groups(axis)
        for step in steps:
            means = {}
            for i, g in enumerate(groups):
                seen = [times[(step, r)][phase] for r in g if (step, r) in times]
                if seen:
                    means[i] = sum(seen) / len(seen)
            if len(means) < 2:
                continue
            mid = median(means.values())
            for i, m in means.items():
                own[i].append(m)
                peer[i].append(mid)
        for i, (ex, ratio) in _excess(own, peer).items():
            if ratio > 1 + threshold:
                out.append(Straggler("link", phase, tuple(groups[i]), ex, ratio))
    return out
