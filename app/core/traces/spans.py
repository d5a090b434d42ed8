"""The values one rank's trace is reduced to: spans of known kinds, grouped by step."""

from __future__ import annotations

from dataclasses import dataclass, field


class TraceError(ValueError):
    """A trace (or a set of them) that cannot be imported; the message names the file,
    group or rank and says why. ``key`` and ``params`` (refusals.py) let a page word the
    same reason in its own language; None for a reason said in English only."""

    def __init__(self, message: str, key: str | None = None, params: dict | None = None):
        super().__init__(message)
        self.key, self.params = key, dict(params or {})


# Span kinds. Compute: F, B, W, optim (the probe's own kinds); data: data loading (no probe
# kind: left uncovered, so it counts as host time); coll: a collective (its axis is found
# later); send/recv: point-to-point.
SPAN_KINDS = ("F", "B", "W", "optim", "data", "coll", "send", "recv")


@dataclass(frozen=True)
class Span:
    kind: str
    start_us: float  # the rank's own clock, absolute microseconds
    end_us: float
    op: str = ""  # the collective's name (allreduce, broadcast, ...) or the range's name
    microbatch: int | None = None
    chunk: int | None = None
    group: tuple[int, ...] | None = None  # global ranks of the collective's process group
    peer: int | None = None  # the other global rank of a send/recv, when the trace says
    axis: str | None = None  # set by axes.label_run: tp, dp, pp, or "world"
    # A collective on the device: the parts of it no compute kernel overlapped (its exposed
    # time). None: all of it is exposed (a host-side span).
    exposed: tuple[tuple[float, float], ...] | None = None


@dataclass(frozen=True)
class StepSpans:
    step: int  # N of the ProfilerStep#N range
    start_us: float
    end_us: float
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class RankTrace:
    name: str  # the file, for messages
    rank: int
    world: int
    device: str  # "cuda" when the trace holds GPU kernels, else "cpu"
    dtype: str  # "bf16" when the collectives carried BFloat16, else "fp32"
    steps: tuple[StepSpans, ...]
    groups: frozenset[tuple[int, ...]] = field(default_factory=frozenset)  # pg_config's
    # (group, axis) where the trace names a group's axis (classify.named_axis)
    named: frozenset[tuple[tuple[int, ...], str]] = field(default_factory=frozenset)
    counts: dict[str, int] = field(default_factory=dict)  # spans seen per kind, for the report
