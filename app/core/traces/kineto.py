"""One rank's Kineto trace (the dict ``torch.profiler``'s export_chrome_trace writes) ->
RankTrace: the rank from ``distributedInfo``, the steps from ``ProfilerStep#N`` ranges, and
each step's spans classified (classify.py).

Where each kind comes from, best source first:
  F/B/W   ranges named as actions (F3, B3.1) or phases (forward/backward); else B is the hull
          of the autograd engine's ops (``autograd::engine::evaluate_function``) in the step
  optim   Optimizer.step / zero_grad ranges;  data: DataLoader ranges
  comms   GPU kernels tagged with ``Collective name`` (when data moved on the device), else
          the backend's ``gloo:``/``nccl:`` annotations (their group from an enclosing
          ``... ranks=[a, b]`` range when the loop names one), else record_param_comms
Only the events named above are kept, so a file's memory is a read chunk and these spans
(its compute kernels as one flat union, busy.py), never its JSON.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from app.core.traces import classify, intervals
from app.core.traces.busy import Busy
from app.core.traces.refusals import refuse
from app.core.traces.spans import RankTrace, Span, StepSpans, TraceError

# Autograd ops closer than this are one run (they follow each other within microseconds; a
# step's forward and optimizer keep consecutive backwards far further apart).
AUTOGRAD_GAP_US = 50.0


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _rank_and_world(header: dict, name: str) -> tuple[int, int]:
    info = header.get("distributedInfo")
    if not isinstance(info, dict) or _int(info.get("rank")) is None:
        raise refuse("no_rank", file=name)
    rank, world = info["rank"], _int(info.get("world_size"))
    if world is None or world < 1 or not 0 <= rank < world:
        raise refuse("rank_outside", file=name, rank=rank, world=world)
    return rank, world


def _pg_groups(header: dict) -> frozenset[tuple[int, ...]]:
    return frozenset(g for g, _ in _pg_named(header))


def _pg_named(header: dict) -> list[tuple[tuple[int, ...], str | None]]:
    """pg_config's groups of two or more ranks, each with the axis its pg_desc names."""
    out = []
    for pg in header["distributedInfo"].get("pg_config") or []:
        ranks = classify.group_ranks(pg.get("ranks")) if isinstance(pg, dict) else None
        if ranks and len(ranks) > 1:
            out.append((ranks, classify.named_axis(pg.get("pg_desc"))))
    return out


class _Collected:
    """The events of interest, gathered in one pass over traceEvents."""

    def __init__(self) -> None:
        self.steps: list[tuple[int, float, float, tuple]] = []
        self.ranges: list[tuple[str, float, float, tuple]] = []
        self.autograd: list[tuple[float, float]] = []
        self.kernels: list[Span] = []
        self.notes: list[tuple[str, float, float, tuple]] = []
        self.group_ranges: list[tuple[float, float, tuple[int, ...]]] = []
        self.named: set[tuple[tuple[int, ...], str]] = set()  # ranges' (group, axis)
        self.param_comms: list[Span] = []
        self.p2p_peers: dict[tuple, list[int | None]] = defaultdict(list)
        self.cuda = False
        self.busy = Busy()  # compute kernels' union, 16 bytes an interval (busy.py)
        self.dtype: str | None = None  # of the first collective that names one

    def add(self, e: dict) -> None:
        if e.get("ph") != "X":
            return
        name, cat, args = e.get("name"), e.get("cat"), e.get("args") or {}
        ts, dur = e.get("ts"), e.get("dur")
        if not isinstance(name, str) or not isinstance(ts, (int, float)):
            return
        if not isinstance(dur, (int, float)) or dur < 0:
            return
        start, end, thread = ts, ts + dur, (e.get("pid"), e.get("tid"))
        if isinstance(args, dict) and "Collective name" in args:
            self.dtype = self.dtype or classify.dtype_of(args.get("dtype"))
        if cat == "kernel":
            self.cuda = True
            if isinstance(args, dict) and "Collective name" in args:
                self.kernels.append(_comm_span(args, start, end))
            else:
                self._busy(start, end)
        elif cat == "user_annotation":
            self._annotation(name, start, end, thread)
        elif cat == "cpu_op":
            self._cpu_op(name, args, start, end, thread)

    def _annotation(self, name: str, start: float, end: float, thread: tuple) -> None:
        step = classify.STEP.match(name)
        if step:
            self.steps.append((int(step[1]), start, end, thread))
        elif classify.annotation_op(name) is not None:
            self.notes.append((name, start, end, thread))
        elif (group := classify.range_group(name)) is not None:
            self.group_ranges.append((start, end, group))
            if (axis := classify.named_axis(name)) is not None:
                self.named.add((group, axis))
        elif classify.action(name) or classify.phase(name):  # not every module's range
            self.ranges.append((name, start, end, thread))

    def _busy(self, start: float, end: float) -> None:
        """Compute kernels, kept as their union (busy.py: a flat array folded as they come,
        not a tuple per kernel): what hides a collective's time."""
        self.busy.add(start, end)

    def _autograd(self, start: float, end: float) -> None:
        """Keep the autograd engine's ops as merged runs: a backward is thousands of ops
        run back to back on one thread, and only the hull of each step's is needed."""
        last = self.autograd[-1] if self.autograd else None
        if last and last[0] <= start <= last[1] + AUTOGRAD_GAP_US:
            self.autograd[-1] = (last[0], max(last[1], end))
        else:
            self.autograd.append((start, end))

    def _cpu_op(self, name: str, args: Any, start: float, end: float, thread: tuple) -> None:
        if name.startswith("autograd::engine::evaluate_function"):
            self._autograd(start, end)
        elif name == "record_param_comms" and isinstance(args, dict):
            self.param_comms.append(_comm_span(args, start, end))
        elif name in ("c10d::send", "c10d::recv_") and isinstance(args, dict):
            # c10d::send(tensors, process_group, dstRank, tag): the peer is the third input.
            inputs = args.get("Concrete Inputs") or []
            peer = inputs[2] if len(inputs) > 2 else ""
            kind = "send" if name == "c10d::send" else "recv"
            self.p2p_peers[(thread, kind)].append(int(peer) if str(peer).isdigit() else None)


def _comm_span(args: dict, start: float, end: float) -> Span:
    op = str(args.get("Collective name", ""))
    group = classify.group_ranks(args.get("Process Group Ranks"))
    return Span("coll", start, end, op=op, group=group)


def _comms(c: _Collected, rank: int) -> list[Span]:
    """The collective spans from the best source the trace has (module docstring)."""
    if c.kernels:
        # On the device, the part of a collective that compute kernels overlapped cost the
        # step nothing (DDP's bucketed all-reduce under the backward): only the rest is
        # exposed communication.
        busy = c.busy.disjoint()
        found = [replace(k, exposed=tuple(intervals.uncovered(k.start_us, k.end_us, busy)))
                 for k in c.kernels]  # fmt: skip
    elif c.notes:
        c.group_ranges.sort()
        found, seen = [], Counter()
        for name, start, end, thread in c.notes:
            op = classify.annotation_op(name) or ""
            kind = classify.comm_kind(op)
            peers = c.p2p_peers.get((thread, kind), [])
            peer = peers[seen[(thread, kind)]] if seen[(thread, kind)] < len(peers) else None
            seen[(thread, kind)] += 1
            group = _named_group(c.group_ranges, start)
            found.append(Span("coll", start, end, op=op, peer=peer, group=group))
    else:
        found = c.param_comms
    out = []
    for s in found:
        kind = classify.comm_kind(s.op)
        if kind is None:
            continue
        peer = s.peer
        if peer is None and kind != "coll" and s.group and len(s.group) == 2 and rank in s.group:
            peer = s.group[0] if s.group[1] == rank else s.group[1]
        out.append(replace(s, kind=kind, peer=peer))
    return out


def _named_group(ranges: list, start: float) -> tuple[int, ...] | None:
    """The group of the ``ranks=[...]`` range an annotation starts in (gloo runs it on a
    worker thread while the caller's thread waits inside the range), else None."""
    i = bisect_right(ranges, (start, float("inf"))) - 1
    return ranges[i][2] if i >= 0 and ranges[i][0] <= start < ranges[i][1] else None


def _compute(c: _Collected, main: tuple) -> list[Span]:
    """F/B/W from action-named ranges when the loop set any, else from phase ranges; optim
    and data from their ranges. Only the outermost of nested ranges of one kind is kept."""
    mine = [r for r in c.ranges if r[3] == main]
    actions = [(classify.action(n), s, e) for n, s, e, _ in mine]
    out = [Span(a[0], s, e, op=a[0], microbatch=a[1], chunk=a[2]) for a, s, e in actions if a]
    use_phases_for = ("optim", "data") if out else ("F", "B", "optim", "data")
    for name, start, end, _ in mine:
        kind = classify.phase(name)
        if kind in use_phases_for:
            out.append(Span(kind, start, end, op=name))
    out.sort(key=lambda s: (s.start_us, -s.end_us))
    kept: list[Span] = []
    # Drop a range inside an earlier one of the same kind (DDP.forward in "## forward ##");
    # ranges of one kind nest a few deep, so the last few kept are enough to look at.
    for s in out:
        if not any(k.kind == s.kind and k.start_us <= s.start_us and s.end_us <= k.end_us
                   for k in kept[-8:]):  # fmt: skip
            kept.append(s)
    return kept


def _autograd_hull(c: _Collected, start: float, end: float) -> Span | None:
    inside = [(s, e) for s, e in c.autograd if start <= s < end]
    if not inside:
        return None
    return Span("B", min(s for s, _ in inside), max(e for _, e in inside), op="autograd")


def _numbered(spans: list[Span]) -> list[Span]:
    """Phase ranges carry no microbatch: number them in order within the step, per kind."""
    seen: Counter = Counter()
    out = []
    for s in spans:
        if s.kind in ("F", "B", "W") and s.microbatch is None:
            s = Span(s.kind, s.start_us, s.end_us, op=s.op, microbatch=seen[s.kind])
            seen[s.kind] += 1
        out.append(s)
    return out


def parse_rank(doc: Any, name: str) -> RankTrace:
    """The RankTrace of one parsed trace file (the whole dict); TraceError naming ``name``
    when it is not a trace, or has no rank or no steps."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError(f"{name}: not a PyTorch profiler trace (no traceEvents list)")
    return parse_events(doc, doc["traceEvents"], name)


def parse_events(header: dict, events: Iterable[Any], name: str) -> RankTrace:
    """The RankTrace of a trace given as its top-level fields and its events, which may be a
    stream: only the events of interest are kept, and ``header`` is read after the last
    event, so a reader may fill it as it goes (a file may put traceEvents first)."""
    c = _Collected()
    for e in events:
        if isinstance(e, dict):
            c.add(e)
    rank, world = _rank_and_world(header, name)
    if not c.steps:
        raise refuse("no_steps", file=name)
    base = header.get("baseTimeNanoseconds")  # Kineto's ts count from it when it is there
    base_us = base / 1000.0 if isinstance(base, (int, float)) else 0.0
    out = _steps(c, rank, base_us)
    return RankTrace(
        name=name, rank=rank, world=world, device="cuda" if c.cuda else "cpu",
        dtype=c.dtype or "fp32", steps=tuple(out), groups=_pg_groups(header),
        named=frozenset(c.named | {(g, a) for g, a in _pg_named(header) if a}),
        counts=dict(Counter(s.kind for st in out for s in st.spans)),
    )  # fmt: skip


def _steps(c: _Collected, rank: int, base_us: float) -> list[StepSpans]:
    """Each span in the step its start falls in, on the clock ``base_us`` sets."""
    main = Counter(t for *_, t in c.steps).most_common(1)[0][0]
    steps = sorted((n, s, e) for n, s, e, t in c.steps if t == main)
    spans = sorted(_compute(c, main) + _comms(c, rank), key=_by_start)
    out, i = [], 0
    for number, start, end in steps:
        while i < len(spans) and spans[i].start_us < start:
            i += 1  # before this step (or between steps): no step owns it
        j = i
        while j < len(spans) and spans[j].start_us < end:
            j += 1
        mine = list(spans[i:j])
        if not any(s.kind == "B" for s in mine):
            hull = _autograd_hull(c, start, end)
            mine += [hull] if hull else []
        mine = [_shifted(s, base_us) for s in _numbered(sorted(mine, key=_by_start))]
        out.append(StepSpans(number, start + base_us, end + base_us, tuple(mine)))
        i = j
    return out


def _shifted(s: Span, base_us: float) -> Span:
    exposed = s.exposed and tuple((a + base_us, b + base_us) for a, b in s.exposed)
    return replace(s, start_us=s.start_us + base_us, end_us=s.end_us + base_us, exposed=exposed)


def _by_start(s: Span) -> float:
    return s.start_us
