"""Each rank's clock offset, from the ends of the collectives it shared with other ranks.

A collective completes on every member of its group at about the same instant: none can
leave before the last one's data arrived (the ring/tree all-reduce of NCCL and gloo alike).
So for one collective instance seen on ranks a and b, ``end_b - end_a`` measures
``offset_b - offset_a``; the median over instances resists the odd late return. Instances
are matched across ranks by (step, group, op, k): the k-th such collective of the step.
Offsets are relative to the lowest rank and found along a spanning tree of those pairs;
ranks joined only by send/recv use those pairs, both ways (_p2p_medians).

The residual is the widest spread of one instance's aligned ends, over every collective
instance. A residual above a step means the pairs do not describe one run's collectives
(different steps profiled, mixed runs): the alignment is refused rather than drawn.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from app.core.layout.topology import Layout
from app.core.traces.refusals import refuse
from app.core.traces.spans import RankTrace


@dataclass(frozen=True)
class Alignment:
    offsets_us: dict[int, float]  # subtract from a rank's clock to get the run's clock
    residual_us: float  # widest spread of one collective's aligned ends
    step_us: float  # the median step length, the bound on the residual
    matched: int  # collective instances seen on two ranks or more
    unaligned: tuple[int, ...]  # ranks no collective or transfer joins to the rest


Instances = dict[tuple, dict[int, float]]


def _instances(
    traces: Sequence[RankTrace], layout: Layout, ranks: list[int], lengths: array
) -> tuple[Instances, Instances]:
    """Collective instances and send->recv pairs: key -> {rank: end_us}; each trace's rank
    appended to ``ranks`` and each step's length to ``lengths``. One walk of the traces: an
    import reads them from a spill file, a rank at a time (app/importers/trace_spill.py)."""
    coll: Instances = defaultdict(dict)
    p2p: Instances = defaultdict(dict)
    everyone = tuple(range(layout.world_size))
    for t in traces:
        ranks.append(t.rank)
        for st in t.steps:
            lengths.append(st.end_us - st.start_us)
            seen: Counter = Counter()
            for s in st.spans:
                if s.kind == "coll" and s.axis:
                    group = s.group or (everyone if s.axis == "world"
                                        else tuple(layout.group(s.axis, t.rank)))  # fmt: skip
                    key = (st.step, group, s.op)
                    coll[(*key, seen[key])][t.rank] = s.end_us
                    seen[key] += 1
                elif s.kind in ("send", "recv") and s.peer is not None:
                    pair = (t.rank, s.peer) if s.kind == "send" else (s.peer, t.rank)
                    key = (st.step, *pair)
                    # A send's start: an asynchronous send (isend) ends when its sender
                    # next looks, long after the data left; no receive ends before it starts.
                    at = s.start_us if s.kind == "send" else s.end_us
                    p2p[(*key, seen[key])][t.rank] = at
                    seen[key] += 1
    return coll, p2p


def _pair_medians(instances: Instances) -> dict[tuple[int, int], float]:
    diffs: dict[tuple[int, int], list[float]] = defaultdict(list)
    for ends in instances.values():
        if len(ends) < 2:
            continue
        first = min(ends)
        for r, end in ends.items():
            if r != first:
                diffs[(first, r)].append(end - ends[first])
    return {pair: median(d) for pair, d in diffs.items()}


def _p2p_medians(instances: Instances) -> dict[tuple[int, int], float]:
    """offset_b - offset_a from transfers: a receive ends a lag after its send starts, so
    with transfers both ways the lag cancels (NTP's two-way estimate, RFC 5905 §8):
    (d_ab - d_ba) / 2, each d the least recv end minus send start in that direction (the
    least-delayed sample, as NTP's clock filter keeps, RFC 5905 §10: a receive already
    waiting when its send was posted, so the lag is the transfer alone)."""
    lags: dict[tuple[int, int], list[float]] = defaultdict(list)
    for (_, src, dst, _k), ends in instances.items():
        if src in ends and dst in ends:
            lags[(src, dst)].append(ends[dst] - ends[src])
    out = {}
    for (a, b), d in lags.items():
        if a < b:
            back = lags.get((b, a))
            out[(a, b)] = (min(d) - min(back)) / 2 if back else min(d)
        elif (b, a) not in lags:
            out[(b, a)] = -min(d)
    return out


def _spanning(ranks: list[int], coll: dict, p2p: dict) -> dict[int, float]:
    """Offsets along a tree that prefers collective pairs (0-1 BFS: a transfer pair costs 1)."""
    edges: dict[int, list[tuple[int, float, int]]] = defaultdict(list)
    for cost, pairs in ((0, coll), (1, p2p)):
        for (a, b), d in pairs.items():
            edges[a].append((b, d, cost))
            edges[b].append((a, -d, cost))
    offsets = {ranks[0]: 0.0}
    queue = deque([ranks[0]])
    while queue:
        a = queue.popleft()
        for b, d, cost in edges[a]:
            if b not in offsets:
                offsets[b] = offsets[a] + d
                if cost == 0:
                    queue.appendleft(b)
                else:
                    queue.append(b)
    return offsets


def align(traces: Sequence[RankTrace], layout: Layout) -> Alignment:
    """The offsets of labelled traces (axes.label_run); TraceError if the residual is over
    a step."""
    ranks: list[int] = []
    lengths = array("d")  # a step's 8 bytes, not a float object's 32
    coll, p2p = _instances(traces, layout, ranks, lengths)
    ranks.sort()
    offsets = _spanning(ranks, _pair_medians(coll), _p2p_medians(p2p))
    spreads = []
    for ends in coll.values():
        aligned = [e - offsets[r] for r, e in ends.items() if r in offsets]
        if len(aligned) > 1:
            spreads.append(max(aligned) - min(aligned))
    step_us = median(lengths) if lengths else 0.0
    residual = max(spreads, default=0.0)
    if residual > step_us:
        raise refuse("align_refused", residual_ms=f"{residual / 1e3:.3f}",
                     step_ms=f"{step_us / 1e3:.3f}")  # fmt: skip
    unaligned = tuple(r for r in ranks if r not in offsets)
    found = {r: offsets.get(r, 0.0) for r in ranks}
    return Alignment(found, residual, step_us, len(spreads), unaligned)
