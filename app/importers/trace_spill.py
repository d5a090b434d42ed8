"""Every rank's RankTrace, kept pickled in a spill file (spill.py) and read back one at a time.

The import's cross-rank stages (axes.infer_layout, align.align, records.build_run) walk all
ranks, several times; holding every rank's spans for them grew an import's memory with its
rank-steps, and pinned the allocator's arenas between one file's parse and the next. Here
a walk holds one rank's spans at a time (those of one file, as its parse did), and the
stages take these as they took a list: they only iterate, index and take ``len``.

Pickle reads back only what this process wrote, to a file with no name that no other
process can open (spill.py): never anything from the user's input.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from typing import overload

from app.core.layout.topology import Layout
from app.core.traces import RankTrace, label_run
from app.importers.spill import Spill


class SpilledTraces(Sequence[RankTrace]):
    """One RankTrace per rank, in the order the ranks were first put."""

    def __init__(self) -> None:
        self._spill = Spill()
        self._at: dict[int, int] = {}  # rank -> its trace's index in the spill
        self._order: list[int] = []
        self.names: dict[int, str] = {}  # rank -> the file, for refusals without a load
        self.world: int | None = None  # the first trace's

    def put(self, trace: RankTrace) -> None:
        """Add the rank's trace, or replace it (its cycles joined: the old copy is left unread)."""
        if trace.rank not in self._at:
            self._order.append(trace.rank)
        self._at[trace.rank] = self._spill.append(pickle.dumps(trace, pickle.HIGHEST_PROTOCOL))
        self.names.setdefault(trace.rank, trace.name)
        self.world = trace.world if self.world is None else self.world

    def of_rank(self, rank: int) -> RankTrace | None:
        at = self._at.get(rank)
        return None if at is None else pickle.loads(self._spill[at])

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, i: int) -> RankTrace: ...
    @overload
    def __getitem__(self, i: slice) -> list[RankTrace]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return pickle.loads(self._spill[self._at[self._order[i]]])

    def __iter__(self) -> Iterator[RankTrace]:
        return (self[i] for i in range(len(self)))


def labelled(traces: Sequence[RankTrace], layout: Layout) -> SpilledTraces:
    """The traces with each communication span's axis set (axes.label_run), labelled one rank
    at a time into a spill of their own, so later walks read them as they are; TraceError
    as label_run's for a rank outside the layout or a group that is no axis's."""
    out = SpilledTraces()
    for t in traces:
        out.put(label_run([t], layout)[0])
    return out
