"""An append-only list of byte strings kept in an unnamed temporary file, not in memory.

An import stores its run in one transaction (all or nothing) and its cross-rank work
(layout, clock alignment) needs every rank before the first record is made, so what it
holds per rank-step until the end went to memory: ~25-30 KB of RSS per rank-step over
HTA's DDP trace (bench/bench_import_scale.py), the spans and records of every rank, and
the allocator's arenas they pinned between one file's parse and the next. Here each item
costs memory only for its offset (8 bytes); the bytes wait on disk (the page cache, which
the kernel reclaims, not the process's RSS), and one item at a time is read back.

The file has no name (``tempfile.TemporaryFile``): it goes when this object is closed or
collected, or when the process dies, so a refused or failed import leaves nothing behind.
"""

from __future__ import annotations

import tempfile
import threading
from array import array


class Spill:
    """Items appended once, read back by index, in any order and as often as asked."""

    def __init__(self) -> None:
        # Open for this object's life, not a block's: closed by close() or when collected.
        self._f = tempfile.TemporaryFile(prefix="meshscope-import-")  # noqa: SIM115
        self._starts = array("q")  # item i is bytes [_starts[i], _starts[i + 1]) of the file
        self._end = 0
        # Reads seek: two walks of one spill (a generator left half-read, a retry) and the
        # writer thread reading what the thread pool wrote must not move each other's place.
        self._lock = threading.Lock()

    def append(self, data: bytes) -> int:
        """Store ``data``; its index."""
        with self._lock:
            self._f.seek(self._end)
            self._f.write(data)
            self._starts.append(self._end)
            self._end += len(data)
            return len(self._starts) - 1

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> bytes:
        if i < 0:
            i += len(self._starts)
        if not 0 <= i < len(self._starts):
            raise IndexError(i)
        end = self._starts[i + 1] if i + 1 < len(self._starts) else self._end
        with self._lock:
            self._f.seek(self._starts[i])
            return self._f.read(end - self._starts[i])

    def close(self) -> None:
        self._f.close()
