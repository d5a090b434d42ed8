"""Per-rank per-step phase times from training logs (torchtitan's structured JSONL,
Megatron's timer lines) -> the probe's records, storing only what the log says.

A log names phases (``fwd_bwd``, ``optim``, ``forward-compute``, ...), not the probe's event
kinds. Each parser maps a phase to a probe kind only where the phase *is* that kind
(Megatron's ``forward-compute`` is F; torchtitan's ``optim`` is the optimizer); a phase the
record shape cannot hold without guessing (torchtitan's ``fwd_bwd``, F and B and the
pipeline's waits in one span; data loading) keeps ``kind=None``: it is counted in the
report and left as host time, as the Kineto import leaves data loading.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.core.inputs.protocol import (
    MAX_SECONDS,
    ProbeEvent,
    ProbeRecord,
    RunInfo,
    order_text,
    oversize,
)
from app.core.layout.topology import Layout
from app.core.traces.records import NOMINAL_MODEL
from app.core.traces.refusals import refuse
from app.core.traces.spans import TraceError


@dataclass(frozen=True)
class Phase:
    name: str  # as the log names it
    kind: str | None  # the probe's event kind, or None: not stored (host time)
    start_s: float  # from the step's start
    end_s: float


@dataclass(frozen=True)
class PhaseStep:
    rank: int
    step: int
    t0: float  # wall clock (Unix seconds) of the step's start, as the log says or estimates
    phases: tuple[Phase, ...]


@dataclass(frozen=True)
class PhaseLog:
    """One parsed log: one rank's (torchtitan) or every rank's (Megatron) steps."""

    name: str  # the file, for messages
    source: str  # "torchtitan" or "megatron"
    steps: tuple[PhaseStep, ...]
    run_key: str = ""  # what must agree across the files of one run (torchtitan's source)
    hints: dict[str, int] = field(default_factory=dict)  # tp, pp, dp, world, bf16 if it says
    notes: tuple[str, ...] = ()  # what the report should say about this log


def merge(logs: Sequence[PhaseLog]) -> list[PhaseStep]:
    """Every step of every log; TraceError naming the file for a rank-step seen twice
    (duplicate ranks, or two runs in one directory) or logs of different sources/runs."""
    seen: dict[tuple[int, int], str] = {}
    out: list[PhaseStep] = []
    first = logs[0]
    for log in logs:
        if (log.source, log.run_key) != (first.source, first.run_key):
            raise TraceError(f"{log.name}: a {log.source} log of {log.run_key or 'a run'!r}, "
                             f"but {first.name} is {first.source} of {first.run_key or 'a run'!r}:"
                             " not one run")  # fmt: skip
        for st in log.steps:
            key = (st.rank, st.step)
            if key in seen:
                raise refuse("log_step_again", file=log.name, rank=st.rank, step=st.step,
                             other=seen[key])  # fmt: skip
            seen[key] = log.name
            out.append(st)
    if not out:
        raise TraceError(", ".join(log.name for log in logs) + ": no complete step in the log")
    return out


def phase_counts(steps: Sequence[PhaseStep]) -> Counter:
    """Phases by what they became: a probe kind, or ``name (not stored: host time)``."""
    return Counter(p.kind or f"{p.name} (not stored: host time)" for st in steps for p in st.phases)


def build_phase_run(
    steps: Sequence[PhaseStep], layout: Layout, run: str, bf16: bool = False
) -> tuple[RunInfo, list[ProbeRecord]]:
    """RunInfo and one record per rank-step (the earliest step stored as step 0); TraceError
    for a rank outside the layout. Both logs come from GPU jobs; the dtype is the log's
    word (Megatron's ``bf16`` argument), else fp32, and no view reads it for a measured run."""
    for st in steps:
        if not 0 <= st.rank < layout.world_size:
            raise TraceError(f"rank {st.rank} is outside the {layout.world_size} ranks of "
                             f"dp={layout.dp} tp={layout.tp} pp={layout.pp}")  # fmt: skip
    first = min(st.step for st in steps)
    info = RunInfo(
        run=run, dp=layout.dp, tp=layout.tp, pp=layout.pp, order=order_text(layout),
        gpus_per_node=layout.gpus_per_node, schedule="1f1b", microbatches=1, virtual_stages=1,
        steps=1 + max(st.step for st in steps) - first, dtype="bf16" if bf16 else "fp32",
        device="cuda", model=NOMINAL_MODEL, cp=layout.cp, ep=layout.ep,
    )  # fmt: skip
    problem = oversize(info)
    if problem:
        raise refuse("too_large", problem=problem)
    return info, [_record(st, layout, run, first) for st in steps]


def _record(st: PhaseStep, layout: Layout, run: str, first: int) -> ProbeRecord:
    coord = layout.coord(st.rank)
    events = [
        ProbeEvent(kind=p.kind, start=_clip(p.start_s), end=_clip(max(p.end_s, p.start_s)))
        for p in st.phases
        if p.kind
    ]
    return ProbeRecord(
        run=run, rank=st.rank, coord=_coord(coord),
        node=layout.node(st.rank), step=st.step - first, attempt=0, t0=max(st.t0, 0.0),
        events=sorted(events, key=lambda e: e.start),
    )  # fmt: skip


def _coord(c) -> dict[str, int]:
    """The protocol's Coord of a layout coordinate (cp and ep are left out at 0)."""
    return {"dp": c.dp, "pp": c.pp, "tp": c.tp, "cp": c.cp, "ep": c.ep}


def _clip(seconds: float) -> float:
    return min(max(seconds, 0.0), MAX_SECONDS)
