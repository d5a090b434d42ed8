"""How far a planner row can be trusted: how much memory it leaves free, and whether any
validated published run is like it.

Memory: a row that fits with less than ``headroom`` of HBM free is *tight* (allocator
fragmentation, NCCL buffers and framework workspaces the model does not count live there).
A tight row is ranked by its speed discounted by the model's error band, so it comes above
a row with room only when it is faster by more than that band.

Published runs: ``app.core.evaluate`` may not import ``app.core.fidelity`` (.importlinter's
core-stages: fidelity sits above evaluate, since its board evaluates scenarios). So what the
runs say comes in as a ``Judge``, a function of a row's ``Shape``, from a caller that may
read them: the web layer builds one from the accuracy board (app/api/plan.py:judge_of).
Without one, rows use ``ERROR_BAND`` and their ``extrapolated`` is None (not judged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_HEADROOM = 0.05  # of HBM kept free
MAX_HEADROOM = 0.5
# The error band when no board is given: the model's error on published large runs, 39 of 44
# within 10% (docs/fidelity.md, the board's summary).
ERROR_BAND = 0.10


@dataclass(frozen=True)
class Shape:
    """What published runs are matched on: the hardware, the schedule, the mesh and the knobs
    on (Scenario field names: sequence_parallel, tp_comm_overlap, overlap_*)."""

    hardware: str
    schedule: str
    dp: int
    tp: int
    pp: int
    zero: int
    knobs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    band: float  # the model's |error| on runs of this kind, as a fraction
    band_level: str  # "kind" (its held-out rows), "nearest" (validated kind) or "constant"
    # Why no validated published run is like it ("hardware", "kind", "schedule", or the name
    # of a knob no run had on), empty when one is; None when no runs were given (not judged).
    unvalidated: tuple[str, ...] | None
    mfu_ceiling: float | None = None  # the highest MFU published on this GPU generation


Judge = Callable[[Shape], Verdict]


def unjudged(shape: Shape) -> Verdict:
    """The Judge without published runs: the constant band, nothing judged."""
    return Verdict(ERROR_BAND, "constant", None)


def margin(peak_bytes: float, capacity_bytes: float) -> float:
    """The share of HBM left free (negative: does not fit)."""
    return (capacity_bytes - peak_bytes) / capacity_bytes


def is_tight(peak_bytes: float, capacity_bytes: float, headroom: float) -> bool:
    """Fits, but with less than ``headroom`` of HBM free."""
    return 0.0 <= margin(peak_bytes, capacity_bytes) < headroom


def rank_speed(tokens_per_s: float, tight: bool, band: float) -> float:
    """What rows are ranked by: a tight row's speed over (1 + band), so it outranks a row with
    room only when tokens_t > tokens_r * (1 + band), faster by more than the error band."""
    return tokens_per_s / (1.0 + band) if tight else tokens_per_s


def extrapolated(verdict: Verdict, mfu: float) -> list[str] | None:
    """Why a row is beyond the published runs (empty: it is not); None when not judged."""
    if verdict.unvalidated is None:
        return None
    above = verdict.mfu_ceiling is not None and mfu > verdict.mfu_ceiling
    return [*verdict.unvalidated, *(["mfu"] if above else [])]
