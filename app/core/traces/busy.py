"""The union of a trace's compute kernels (what hides a collective's time), kept as a flat array
of floats as the kernels stream in.

GPU kernels run back to back with gaps between them, so their union is about one interval
per kernel: ~900 a step of HTA's DDP trace. As a list of (start, end) tuples that was ~100
KB a step (a tuple and two float objects each), held until a file's last event: the part
of an import's memory that grew with a file's steps (bench/bench_import_scale.py, 4 ranks
x 18 -> 72 steps: +47 KB of RSS a rank-step). As two doubles an interval it is 16 bytes.

Kernels arrive nearly in time order (not exactly: a file lists several streams), so each
batch is folded into the array at the place where it starts: only the tail from there is
rebuilt. The result is exactly ``intervals.union`` of every kernel added.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence

from app.core.traces import intervals

BATCH = 4096  # kernels gathered before a fold


class Pairs(Sequence[tuple[float, float]]):
    """A flat array [a0, b0, a1, b1, ...] read as sorted, disjoint (a, b) intervals, which
    intervals.covered/uncovered take as they take a list."""

    def __init__(self, flat: array) -> None:
        self.flat = flat

    def __len__(self) -> int:
        return len(self.flat) // 2

    def __getitem__(self, i):  # type: ignore[override]  # int indices only
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return (self.flat[2 * i], self.flat[2 * i + 1])


class _Ends(Sequence[float]):
    def __init__(self, flat: array) -> None:
        self.flat = flat

    def __len__(self) -> int:
        return len(self.flat) // 2

    def __getitem__(self, i):  # type: ignore[override]  # bisect's int indices only
        return self.flat[2 * i + 1]


class Busy:
    """Add (start, end) intervals one at a time; ``disjoint()`` is their union."""

    def __init__(self) -> None:
        self._flat = array("d")
        self._pending: list[tuple[float, float]] = []

    def add(self, start: float, end: float) -> None:
        self._pending.append((start, end))
        if len(self._pending) >= BATCH:
            self._fold()

    def _fold(self) -> None:
        new = intervals.union(self._pending)
        self._pending = []
        if not new:
            return
        # Stored intervals that end before the batch's first start are before all of it and
        # do not touch it (union merges a <= b): they stay. The rest are merged again.
        i = bisect_left(_Ends(self._flat), new[0][0])
        tail = list(Pairs(self._flat[2 * i :]))
        del self._flat[2 * i :]
        for a, b in intervals.union(tail + new) if tail else new:
            self._flat.extend((a, b))

    def disjoint(self) -> Pairs:
        """The union so far: sorted, disjoint intervals."""
        self._fold()
        return Pairs(self._flat)
