"""Actions + durations -> a Timeline: the plain pass (passes) for every schedule that sends
each output when its action ends, the unit pass (units) for DualPipe(V)'s overlapped pairs;
steady measures the period of back-to-back steps.
Imports schedules, layout and support only.

This module re-exports timeline's vocabulary (Durations, Timeline, simulate, ...)."""

from app.core.simulate.timeline import (
    Durations,
    DurationsLike,
    Event,
    Timeline,
    peak_held,
    per_chunk,
    simulate,
)

__all__ = ["Durations", "DurationsLike", "Event", "Timeline", "peak_held", "per_chunk", "simulate"]
