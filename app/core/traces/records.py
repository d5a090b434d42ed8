"""Labelled, aligned traces -> the run's RunInfo and one ProbeRecord per rank per step, the
shape the probe sends (app/core/inputs/protocol.py), so the store and every view take them
as they take the probe's.

Kinds: F/B/W and optim as the ranges said; a collective on the TP axis is ``tp``, on the DP
axis ``dp``, on the CP axis ``cp`` (a send/recv between CP ranks too: ring attention) and on
an expert-parallel group ``ep``; a send/recv between stages is ``pp_send``/``pp_recv``. What
the probe has no kind for (data loading, a collective over the whole world or inside a
pipeline group) is left out of the events, so the breakdown counts it as host time, not as a
guess.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from app.core.inputs.protocol import (
    COMPUTE_KINDS,
    MAX_SECONDS,
    ProbeEvent,
    ProbeRecord,
    RunInfo,
    order_text,
    oversize,
)
from app.core.layout.topology import Layout
from app.core.traces.align import Alignment
from app.core.traces.refusals import refuse
from app.core.traces.spans import RankTrace, Span

# The model is not in a trace; the run keeps a nominal shape (RunInfo needs one) that no
# measured view reads: the breakdown, heatmap and bubble split use the events alone.
NOMINAL_MODEL = {"hidden": 64, "heads": 4, "layers": 2, "vocab": 64, "seq_len": 16,
                 "microbatch_size": 1}  # fmt: skip
_COLLECTIVE_KIND = {"tp": "tp", "dp": "dp", "cp": "cp", "ep": "ep"}
MAX_MICROBATCH, MAX_CHUNK = 1_000_000, 1024  # ProbeEvent's bounds


@dataclass(frozen=True)
class RunShape:
    """What the user may say of a run the traces cannot: its schedule and microbatches."""

    run: str
    schedule: str | None = None  # default: 1f1b
    microbatches: int | None = None  # default: the most forward ranges of one step


def event_kind(s: Span) -> str | None:
    """The probe's event kind a span is stored as, None for what has none (host time)."""
    if s.kind in ("F", "B", "W", "optim"):
        return s.kind
    if s.kind == "coll":
        return _COLLECTIVE_KIND.get(s.axis or "")
    if s.kind in ("send", "recv") and s.axis == "pp":
        return "pp_send" if s.kind == "send" else "pp_recv"
    if s.kind in ("send", "recv") and s.axis == "cp":
        return "cp"  # a ring-attention exchange: CP's communication, not a pipeline wait
    return None


def first_step(traces: Sequence[RankTrace]) -> int:
    """The first profiled step of any rank: stored as step 0. ProfilerStep#N counts from the
    profiler's start (its wait and warm-up steps included), not from the training loop's, so
    the run's steps are the profiled window, numbered alike on every rank."""
    return min(st.step for t in traces for st in t.steps)


@dataclass(frozen=True)
class _Seen:
    """What the run's info and clock shift need of every rank, found in one walk: an import
    reads the traces from a spill file, a rank at a time (app/importers/trace_spill.py)."""

    first: int  # first_step
    last: int  # the last profiled step of any rank
    forwards: int  # the most forward ranges of one step
    earliest_us: float  # the earliest step start, aligned
    dtype: str
    device: str


def _seen(traces: Sequence[RankTrace], alignment: Alignment) -> _Seen:
    first, last, forwards, earliest = None, None, 0, float("inf")
    for t in traces:
        offset = alignment.offsets_us[t.rank]
        for st in t.steps:
            first = st.step if first is None else min(first, st.step)
            last = st.step if last is None else max(last, st.step)
            forwards = max(forwards, sum(s.kind == "F" for s in st.spans))
            earliest = min(earliest, st.start_us - offset)
    if first is None or last is None:
        raise ValueError("no steps")  # kineto.parse_events refuses a trace without steps
    return _Seen(first, last, forwards, earliest, traces[0].dtype, traces[0].device)


def run_info(seen: _Seen, layout: Layout, shape: RunShape) -> RunInfo:
    info = RunInfo(
        run=shape.run, dp=layout.dp, tp=layout.tp, pp=layout.pp, order=order_text(layout),
        gpus_per_node=layout.gpus_per_node, schedule=shape.schedule or "1f1b",
        microbatches=shape.microbatches or max(seen.forwards, 1), virtual_stages=1,
        steps=1 + seen.last - seen.first, dtype=seen.dtype, device=seen.device,
        model=NOMINAL_MODEL, cp=layout.cp, ep=layout.ep,
    )  # fmt: skip
    problem = oversize(info)
    if problem:
        raise refuse("too_large", problem=problem)
    return info


def _event(s: Span, kind: str, step_start_us: float) -> ProbeEvent:
    start = min(max(0.0, (s.start_us - step_start_us) / 1e6), MAX_SECONDS)
    end = min(max(start, (s.end_us - step_start_us) / 1e6), MAX_SECONDS)
    # A range named past the protocol's bounds (F2000000) keeps its kind, not its number.
    mb = s.microbatch if kind in COMPUTE_KINDS and (s.microbatch or 0) <= MAX_MICROBATCH else None
    chunk = s.chunk if kind in COMPUTE_KINDS and (s.chunk or 0) <= MAX_CHUNK else None
    peer = s.peer if kind in ("pp_send", "pp_recv") else None
    return ProbeEvent(kind=kind, microbatch=mb, chunk=chunk, start=start, end=end, peer=peer)


def _events(s: Span, kind: str, step_start_us: float) -> list[ProbeEvent]:
    """One event, or for a device collective one per exposed part (none when compute hid
    all of it)."""
    if s.exposed is None:
        return [_event(s, kind, step_start_us)]
    return [_event(replace(s, start_us=a, end_us=b), kind, step_start_us) for a, b in s.exposed]


def _coord(c) -> dict[str, int]:
    """The protocol's Coord of a layout coordinate (cp and ep are left out at 0)."""
    return {"dp": c.dp, "pp": c.pp, "tp": c.tp, "cp": c.cp, "ep": c.ep}


def rank_records(
    t: RankTrace, layout: Layout, info: RunInfo, offset_us: float, shift_us: float, first: int
) -> Iterator[ProbeRecord]:
    """The records of one rank, one per profiled step (ProfilerStep#first is step 0)."""
    coord, cap = layout.coord(t.rank), info.events_cap()
    for st in t.steps:
        events = [e for s in st.spans if (k := event_kind(s)) for e in _events(s, k, st.start_us)]
        # Over the cap (the run page's budget per step): compute first, then in time order.
        events.sort(key=lambda e: (e.kind not in ("F", "B", "W"), e.start))
        kept, dropped = events[:cap], max(len(events) - cap, 0)
        yield ProbeRecord(
            run=info.run, rank=t.rank, coord=_coord(coord),
            node=layout.node(t.rank), step=st.step - first, attempt=0,
            t0=(st.start_us - offset_us + shift_us) / 1e6,
            events=sorted(kept, key=lambda e: e.start), dropped_events=dropped,
        )  # fmt: skip


def build_run(
    traces: Sequence[RankTrace], layout: Layout, alignment: Alignment, shape: RunShape
) -> tuple[RunInfo, Iterator[ProbeRecord]]:
    """The run's info, and its records made one rank at a time as they are consumed."""
    seen = _seen(traces, alignment)
    info = run_info(seen, layout, shape)
    # Added to every aligned time so that no step starts before the epoch (t0 >= 0): a
    # trace without baseTimeNanoseconds counts from its process's own start.
    shift, first = max(0.0, -seen.earliest_us), seen.first

    def records() -> Iterator[ProbeRecord]:
        for t in traces:
            yield from rank_records(t, layout, info, alignment.offsets_us[t.rank], shift, first)

    return info, records()
