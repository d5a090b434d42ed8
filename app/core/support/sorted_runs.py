"""Sorted distinct values of a long list without one long C call.

``sorted(set(values))`` over the 786k event edges of a p=32, m=4096 flow holds the GIL for
~50 ms in two C calls, and a server answering /healthz meanwhile waits that long
(bench/bench_heavy.py). Here each C call sees one piece: pieces are sorted alone, then merged
two by two (timsort finds the two runs and merges them in linear time), and duplicates are
dropped piece by piece; the GIL can change hands between any two calls.
"""

from __future__ import annotations

from collections.abc import Iterable

PIECE = 16_384  # values per C call while sorting and deduplicating


def sorted_unique(values: Iterable[float]) -> list[float]:
    """``sorted(set(values))``, in calls of at most PIECE values except the last merges."""
    values = list(values)
    runs = [sorted(values[i : i + PIECE]) for i in range(0, len(values), PIECE)]
    while len(runs) > 1:
        runs = [sorted(runs[i] + runs[i + 1]) if i + 1 < len(runs) else runs[i]
                for i in range(0, len(runs), 2)]  # fmt: skip
    merged = runs[0] if runs else []
    out: list[float] = []
    for i in range(0, len(merged), PIECE):
        part = list(dict.fromkeys(merged[i : i + PIECE]))  # sorted: equal values are adjacent
        if out and part[0] == out[-1]:
            del part[0]
        out += part
    return out
