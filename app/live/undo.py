"""Put in-memory caches back when the transaction that changed them does not commit.

The store caches what it read from its tables (each rank's first step per attempt, each
run's world size) and changes the cache inside a transaction. A transaction that fails (a
full disk, an I/O error, a row refused inside its savepoint) leaves the tables as they
were, so the caches must be too: a cached start step outliving its rollback once left a
resumed run with two current rows per step (issue 26, item 6). Every change goes through
``set``, which notes the old value; ``undo`` puts back everything after a mark.
"""

from __future__ import annotations

_ABSENT = object()


class UndoLog:
    """Only a key's first change since the last mark is logged: the value to put back is the
    one it had then, whatever came after. A transaction of a million records (an import)
    changes a few keys per rank and per step again and again; one entry a change held
    ~1.3 KB a rank-step until the commit."""

    def __init__(self) -> None:
        self._log: list[tuple[dict, object, object]] = []
        # (id of a cache, key) logged since the mark. A cache's id cannot be reused while
        # the log holds the cache, and it holds every cache named here.
        self._seen: set[tuple[int, object]] = set()

    def _note(self, cache: dict, key: object) -> None:
        mark = (id(cache), key)
        if mark not in self._seen:
            self._seen.add(mark)
            self._log.append((cache, key, cache.get(key, _ABSENT)))

    def set(self, cache: dict, key: object, value: object) -> None:
        self._note(cache, key)
        cache[key] = value

    def drop(self, cache: dict, key: object) -> None:
        if key in cache:
            self._note(cache, key)
            del cache[key]

    def mark(self) -> int:
        self._seen.clear()  # changes after the mark are logged anew: undo(mark) needs them
        return len(self._log)

    def undo(self, to: int = 0) -> None:
        """Restore every value changed since ``mark() == to``, newest first."""
        while len(self._log) > to:
            cache, key, old = self._log.pop()
            if old is _ABSENT:
                cache.pop(key, None)
            else:
                cache[key] = old
        self._seen.clear()

    def forget(self) -> None:
        """The transaction committed: its changes stay."""
        self._log.clear()
        self._seen.clear()
