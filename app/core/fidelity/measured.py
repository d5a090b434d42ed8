"""Measured probe records -> where each rank's step went, and how far it is from predicted.

Pure: takes ``app.core.inputs.protocol.ProbeRecord`` values, returns frozen dataclasses and dicts.

Event nesting (docs/probe.md): ``tp`` intervals sit inside the F/B that issued them;
``pp_recv`` is an action waiting for its input; ``pp_send`` overlaps compute (its end is an
upper bound) and is left out of every sum; ``dp`` and ``optim`` follow the pipeline. ``cp``
and ``ep`` (context-parallel exchanges, expert all-to-alls; imported runs) sit inside compute
as tp does. One rank runs one thread, so every instant of its step ``[0, T]`` is given
exactly one label by priority, tp > cp > ep > dp > pp_wait > compute > host, and the labels
add up to T:

    T = compute + tp + cp + ep + dp + pp_wait + host             (each rank, each step)

The bubble (everything but compute) is then split into its causes:

    schedule = min(pp_wait, predicted idle of the stage)  warm-up/cool-down the schedule implies
    pp_peers = pp_wait - schedule                         waiting beyond it (stragglers, links)
    tp, dp   = collective time (cp, ep too in a run that has them)
    host     = time covered by no event (Python, data, launch gaps)

The predicted idle comes from ``simulate`` fed with this run's own mean F/B/W per stage and
the fastest receive as the transfer time (the least-waited receive is the closest we get to a
pure transfer), so the split charges the schedule only for what it would cost on these
very stages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.schedules import build
from app.core.simulate import Durations, Timeline, simulate

COMPUTE = frozenset({"F", "B", "W", "optim"})
PIPE = ("F", "B", "W")
# Label priority for an instant covered by several intervals (higher wins). Collectives rank
# as Megatron-LM orders its axes, fastest first (parallel_state.py: "tp-cp-ep-dp-pp").
_PRIORITY = {"tp": 6, "dp": 3, "pp_recv": 2, "F": 1, "B": 1, "W": 1, "optim": 1}
_WIDE = {"cp": 5, "ep": 4}  # apart, so a record without them sweeps no more levels than ever
CAUSES = ("schedule", "pp_peers", "tp", "dp", "host")
CAUSES_CP_EP = ("schedule", "pp_peers", "tp", "cp", "ep", "dp", "host")
PARTS = ("step_time_s", "compute_s", "tp_s", "dp_s", "pp_wait_s", "host_s")  # RankBreakdown's


@dataclass(frozen=True)
class RankBreakdown:
    """One rank's step, in seconds; the seven parts add up to ``step_time_s``."""

    rank: int
    stage: int
    step: int
    attempt: int
    step_time_s: float
    compute_s: float
    tp_s: float
    dp_s: float
    pp_wait_s: float
    host_s: float
    cp_s: float = 0.0
    ep_s: float = 0.0

    @property
    def idle_frac(self) -> float:
        """Waiting for peers plus uncovered host time, over the step."""
        t = self.step_time_s
        return (self.pp_wait_s + self.host_s) / t if t > 0 else 0.0

    @property
    def comm_frac(self) -> float:
        """Collective time (TP, CP, EP, DP) over the step (pipeline waits are idle, not comm)."""
        t = self.step_time_s
        return (self.tp_s + self.cp_s + self.ep_s + self.dp_s) / t if t > 0 else 0.0


class StepSplit(NamedTuple):
    """One rank-step's seconds per label, as ``split`` adds them up: what the store keeps
    of every record (its columns) without building a ``RankBreakdown``."""

    host_s: float
    compute_s: float
    pp_wait_s: float
    dp_s: float
    ep_s: float
    cp_s: float
    tp_s: float
    step_time_s: float

    @property
    def idle_frac(self) -> float:  # RankBreakdown.idle_frac
        t = self.step_time_s
        return (self.pp_wait_s + self.host_s) / t if t > 0 else 0.0

    @property
    def comm_frac(self) -> float:  # RankBreakdown.comm_frac
        t = self.step_time_s
        return (self.tp_s + self.cp_s + self.ep_s + self.dp_s) / t if t > 0 else 0.0


def breakdown(record: ProbeRecord) -> RankBreakdown:
    """Label every instant of the rank's step by priority and add the labels up."""
    s = split(record)
    return RankBreakdown(
        record.rank, record.coord.pp, record.step, record.attempt, s.step_time_s, s.compute_s,
        s.tp_s, s.dp_s, s.pp_wait_s, s.host_s, s.cp_s, s.ep_s,
    )  # fmt: skip


def split(record: ProbeRecord) -> StepSplit:
    """``breakdown``'s seconds alone. Run on every stored record (app/live/store.py), so
    written for speed: the same sweep and the same additions in the same order as ever."""
    marks: list[tuple[float, int, int]] = []  # (time, +1 open / -1 close, priority)
    add, priority, wide = marks.append, _PRIORITY.get, False
    for e in record.events:
        prio = priority(e.kind)
        if prio is None:
            prio = _WIDE.get(e.kind)  # reached by pp_send (no label) and cp/ep only
            if prio is None:
                continue
            wide = True
        add((e.start, 1, prio))
        add((e.end, -1, prio))
    # By time alone (itemgetter: no Python call per mark); stable, and ties need no order:
    # a zero-length segment adds 0, and the counts after a tie do not depend on its order.
    marks.sort(key=_AT)
    return _spent_wide(marks) if wide else _spent(marks)


def _spent(marks: list[tuple[float, int, int]]) -> StepSplit:
    """Seconds per label of marks without cp or ep: four levels, counted in locals (~30%
    faster than a list indexed by priority; the same additions in the same order)."""
    n_tp = n_dp = n_wait = n_compute = 0  # open intervals per level
    tp = dp = wait = compute = host = prev = 0.0
    for t, delta, prio in marks:
        if t > prev:
            d = t - prev
            if n_tp:
                tp += d
            elif n_dp:
                dp += d
            elif n_wait:
                wait += d
            elif n_compute:
                compute += d
            else:
                host += d
            prev = t
        if prio == 1:
            n_compute += delta
        elif prio == 6:
            n_tp += delta
        elif prio == 2:
            n_wait += delta
        else:
            n_dp += delta
    return StepSplit(host, compute, wait, dp, 0.0, 0.0, tp, prev)


def _spent_wide(marks: list[tuple[float, int, int]]) -> StepSplit:
    """_spent with cp (5) and ep (4) between tp and dp."""
    n = [0] * 7
    spent = [0.0] * 8
    prev = 0.0
    for t, delta, prio in marks:
        if t > prev:
            top = (6 if n[6] else 5 if n[5] else 4 if n[4] else 3 if n[3] else 2 if n[2]
                   else 1 if n[1] else 0)  # fmt: skip
            spent[top] += t - prev
            prev = t
        n[prio] += delta
    spent[7] = prev
    return StepSplit._make(spent)


_AT = itemgetter(0)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def stage_durations(records: Iterable[ProbeRecord], pp: int) -> list[Durations]:
    """Mean F, B and W per pipeline stage (over ranks, microbatches, chunks and steps), and
    the fastest pp_recv of the stage as its transfer time. A stage with no records takes
    the mean of the others, so the simulation still runs while ranks are missing."""
    kinds: list[dict[str, list[float]]] = [
        {k: [] for k in ("F", "B", "W", "pp_recv")} for _ in range(pp)
    ]
    for r in records:
        stage = kinds[r.coord.pp]
        for e in r.events:
            if e.kind in stage:
                stage[e.kind].append(e.end - e.start)
    known = [
        Durations(_mean(k["F"]), _mean(k["B"]), _mean(k["W"]), min(k["pp_recv"], default=0.0))
        for k in kinds
    ]
    seen = [d for d, k in zip(known, kinds, strict=True) if k["F"]]
    if not seen:
        return known
    fill = Durations(*(_mean([getattr(d, f) for d in seen]) for f in ("f", "b", "w", "p2p")))
    return [d if k["F"] else fill for d, k in zip(known, kinds, strict=True)]


def stage_tail_s(records: Iterable[ProbeRecord], pp: int) -> list[float]:
    """Mean dp + optim time per stage: what follows the pipeline in every step."""
    sums, counts = [0.0] * pp, [0] * pp
    for r in records:
        sums[r.coord.pp] += sum(e.end - e.start for e in r.events if e.kind in ("dp", "optim"))
        counts[r.coord.pp] += 1
    return [s / c if c else 0.0 for s, c in zip(sums, counts, strict=True)]


def predict(info: RunInfo, durations: list[Durations]) -> Timeline:
    """The core's simulation of this run's schedule with measured per-stage durations."""
    actions = build(info.schedule, info.pp, info.microbatches, info.virtual_stages)
    return simulate(info.schedule, actions, durations, info.virtual_stages)


def stage_idle_s(timeline: Timeline, pp: int) -> list[float]:
    """Predicted idle per stage inside the pipeline: makespan minus the stage's busy time."""
    busy = timeline.busy or [0.0] * pp
    return [max(timeline.makespan - b, 0.0) for b in busy]


def axes_beyond(info: RunInfo) -> tuple[str, ...]:
    """cp and ep, each where the run has it (> 1): the parts a 3D run's views leave out."""
    return tuple(a for a in ("cp", "ep") if getattr(info, a) > 1)


def causes_of(info: RunInfo) -> tuple[str, ...]:
    """The bubble's causes in a run: CAUSES, with cp and ep where the run has them."""
    extra = axes_beyond(info)
    return tuple(c for c in CAUSES_CP_EP if c not in ("cp", "ep") or c in extra)


def parts_of(info: RunInfo) -> tuple[str, ...]:
    """The breakdown's fields a run's views show: PARTS, with cp_s and ep_s where it has them."""
    return PARTS + tuple(f"{a}_s" for a in axes_beyond(info))


def causes(
    b: RankBreakdown, predicted_idle_s: float, names: tuple[str, ...] = CAUSES
) -> dict[str, float]:
    """The bubble of one rank-step split into ``names`` (CAUSES or CAUSES_CP_EP; seconds, they
    sum to T - compute when the run's cp and ep time is among them)."""
    schedule = min(b.pp_wait_s, predicted_idle_s)
    every = {
        "schedule": schedule,
        "pp_peers": b.pp_wait_s - schedule,
        "tp": b.tp_s,
        "cp": b.cp_s,
        "ep": b.ep_s,
        "dp": b.dp_s,
        "host": b.host_s,
    }
    return {k: every[k] for k in names}


def pipeline_origin(records: Iterable[ProbeRecord]) -> tuple[float, float]:
    """(earliest step start t0, earliest compute start) in wall seconds: the measured
    timeline is drawn from the first, the predicted one is shifted to start at the second."""
    t0 = first = float("inf")
    for r in records:
        t0 = min(t0, r.t0)
        starts = [e.start for e in r.events if e.kind in PIPE]
        if starts:
            first = min(first, r.t0 + min(starts))
    if t0 == float("inf"):
        return 0.0, 0.0
    return t0, (first if first != float("inf") else t0)


def residuals(
    records: Iterable[ProbeRecord], timeline: Timeline, offset_s: float, origin_s: float
) -> list[dict]:
    """Per measured F/B/W action: measured minus predicted start, end and duration (s).

    Measured times are ``t0 + start - origin``; predicted ones are shifted by ``offset_s``
    (the measured pipeline's first compute) so both start together.
    """
    predicted = {(e.stage, e.kind, e.microbatch, e.chunk): e for e in timeline.events}
    out = []
    for r in records:
        for e in r.events:
            p = predicted.get((r.coord.pp, e.kind, e.microbatch, e.chunk or 0))
            if e.kind not in PIPE or p is None:
                continue
            start, end = r.t0 + e.start - origin_s, r.t0 + e.end - origin_s
            out.append(
                {
                    "rank": r.rank, "stage": r.coord.pp, "kind": e.kind,
                    "microbatch": e.microbatch, "chunk": e.chunk or 0,
                    "start_s": start - (p.start + offset_s), "end_s": end - (p.end + offset_s),
                    "duration_s": (e.end - e.start) - (p.end - p.start),
                }
            )  # fmt: skip
    return out


def residual_summary(actions: list[dict]) -> dict[str, dict[str, float]]:
    """Per kind: how many actions, mean and max |end residual| and mean duration residual."""
    out: dict[str, dict[str, float]] = {}
    for kind in PIPE:
        mine = [a for a in actions if a["kind"] == kind]
        if mine:
            ends = [abs(a["end_s"]) for a in mine]
            out[kind] = {
                "n": len(mine),
                "mean_abs_end_s": _mean(ends),
                "max_abs_end_s": max(ends),
                "mean_duration_s": _mean([a["duration_s"] for a in mine]),
            }
    return out
