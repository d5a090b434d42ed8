"""An import's records, held as their JSON in a spill file until the store takes them one at
a time.

An import stores its run in one transaction (all or nothing), so every record of every rank
exists before the first is written. As ProbeRecord objects, with a pydantic ProbeEvent per
event, they were what an import's memory grew with: ~130 KB per rank-step of HTA's DDP
trace (bench/bench_import_scale.py: 64 ranks x 20 MB held 73 MiB over the interpreter, and
~600 MiB was the projection for 64 x 200 MB). As compact JSON they were ~9 KB a rank-step,
still held to the end; now that JSON waits in an unnamed temporary file (spill.py) and only
its offset (8 bytes) is in memory. Each record is rebuilt (validated again) when read, and
dropped once the store has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from app.core.inputs.protocol import ProbeRecord
from app.importers.spill import Spill


class Records(Sequence[ProbeRecord]):
    """ProbeRecords kept as JSON in a spill file; a list's reading (len, index, iteration)
    rebuilds them. ``records`` is consumed as it is made: one record is alive at a time."""

    def __init__(self, records: Iterable[ProbeRecord]) -> None:
        self._json = Spill()
        ranks = set()
        for r in records:
            self._json.append(r.model_dump_json().encode())
            ranks.add(r.rank)
        self.ranks = sorted(ranks)

    @classmethod
    def of(cls, records: Iterable[ProbeRecord]) -> Records:
        return records if isinstance(records, Records) else cls(records)

    def __len__(self) -> int:
        return len(self._json)

    @overload
    def __getitem__(self, i: int) -> ProbeRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[ProbeRecord]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return ProbeRecord.model_validate_json(self._json[i])

    def __iter__(self) -> Iterator[ProbeRecord]:
        return (ProbeRecord.model_validate_json(self._json[i]) for i in range(len(self)))


class Ops(Sequence[tuple[str, tuple]]):
    """The store's ops for a run (Store.transaction): ``head``, one ``record`` op per record,
    ``tail``; each record op made as the store reaches it, so at most one record's objects
    are alive at a time. Re-iterable: the store runs a failed batch again op by op."""

    def __init__(self, head: list, records: Records, tail: list, now: float) -> None:
        self.head, self.records, self.tail, self.now = head, records, tail, now

    def __len__(self) -> int:
        return len(self.head) + len(self.records) + len(self.tail)

    def __getitem__(self, i):  # type: ignore[override]  # int indices only
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < len(self.head):
            return self.head[i]
        i -= len(self.head)
        if i < len(self.records):
            return ("record", (self.records[i], self.now))
        return self.tail[i - len(self.records)]

    def __iter__(self) -> Iterator[tuple[str, tuple]]:
        yield from self.head
        yield from (("record", (r, self.now)) for r in self.records)
        yield from self.tail
