"""Interval arithmetic on (start, end) pairs: the union of many, and what of one interval a
union leaves uncovered."""

from __future__ import annotations

from bisect import bisect_left

Interval = tuple[float, float]


def union(intervals: list[Interval]) -> list[Interval]:
    """Sorted, disjoint intervals covering exactly what the given ones cover."""
    out: list[Interval] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def covered(start: float, end: float, disjoint: list[Interval]) -> float:
    """How much of [start, end] the sorted, disjoint intervals cover."""
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in _overlapping(start, end, disjoint))


def uncovered(start: float, end: float, disjoint: list[Interval]) -> list[Interval]:
    """The parts of [start, end] the sorted, disjoint intervals leave uncovered, in order."""
    out, at = [], start
    for a, b in _overlapping(start, end, disjoint):
        if a > at:
            out.append((at, min(a, end)))
        at = max(at, b)
    if at < end:
        out.append((at, end))
    return out


def _overlapping(start: float, end: float, disjoint: list[Interval]) -> list[Interval]:
    # The first interval that may overlap is the one before the first ending after start:
    # ends are sorted too, since the intervals are disjoint and sorted.
    i = max(bisect_left(disjoint, (start, start)) - 1, 0)
    out = []
    while i < len(disjoint) and disjoint[i][0] < end:
        if disjoint[i][1] > start:
            out.append(disjoint[i])
        i += 1
    return out
