"""The step and rank summaries' additions of one transaction, folded per (run, step) and per
(run, rank) and written once at its end: a batch of 512 records of a 1,024-rank run touches
one or two steps, and an upsert per record was ~24 us of the writer's ~140 us a record; a
records frame's records are one rank's, and its upsert per record was ~10 us of ~100 (issue
26 item 11).

``add_current`` counts a new current row into the folds of its rank and of its step, and
returns the step's (ranks, slowest step time, highest attempt) with the row counted, read
once per step and transaction from ``step_summary`` and kept up to date in memory, so a
step's completeness costs no statement. ``flush`` writes the folds before COMMIT. A resume
recounts the steps from its resume point, and the resumed rank's summary, from the rows
themselves, which already hold this transaction's: ``forget_from`` drops those folds first.
A batch run op by op (``isolating``: each op in its savepoint) changes the folds through
the store's undo log, so a record refused in its savepoint takes its counts back. A batch
run whole fails whole, and ``clear`` drops every fold then: its changes are set directly,
~2 us a record less than logging each (issue 26 item 11). ``clear`` ends the transaction
either way.
"""

from __future__ import annotations

import sqlite3

from app.live import summary
from app.live.undo import UndoLog

Key = tuple[str, int]  # (run, step)
Counts = tuple[int, float, int]  # ranks, slowest step time, highest attempt
Fold = tuple[int, float, int, float | None]  # rows added, slowest, highest attempt, least loss
RankFold = tuple[int, int, int]  # highest attempt, highest step, rows added


class StepTally:
    def __init__(self, undo: UndoLog) -> None:
        self._undo = undo
        self._counts: dict[Key, Counts] = {}  # stored + folded, of steps read this transaction
        self._folds: dict[Key, Fold] = {}  # not yet written
        self._ranks: dict[Key, RankFold] = {}  # (run, rank) -> not yet written
        self.isolating = False  # set by the store for each batch it runs

    def add_current(
        self,
        conn: sqlite3.Connection,
        run: str,
        rank: int,
        step: int,
        attempt: int,
        step_time_s: float,
        loss: float | None,
    ) -> Counts:
        # max() and min() written out as expressions: the builtin calls were ~0.6 us of a
        # record's ~2 us here.
        rkey, key = (run, rank), (run, step)
        r = self._ranks.get(rkey)
        if r is None:
            rank_fold = (attempt, step, 1)
        else:
            a, s, k = r
            rank_fold = (attempt if attempt > a else a, step if step > s else s, k + 1)
        counts = self._counts.get(key)
        if counts is None:
            # A new step: nothing, and the max of any real row beats (0.0, 0).
            counts = summary.step_of(conn, run, step) or (0, 0.0, 0)
        n, slowest, top = counts
        counts = (
            n + 1, step_time_s if step_time_s > slowest else slowest,
            attempt if attempt > top else top,
        )  # fmt: skip
        f = self._folds.get(key)
        if f is None:
            fold = (1, step_time_s, attempt, loss)
        else:
            k, slow, high, least = f
            if least is None or (loss is not None and loss < least):
                least = loss  # as step_summary's MIN(loss): a NULL leaves the other (summary.py)
            fold = (k + 1, step_time_s if step_time_s > slow else slow,
                    attempt if attempt > high else high, least)  # fmt: skip
        if self.isolating:
            log = self._undo.set
            log(self._ranks, rkey, rank_fold)
            log(self._counts, key, counts)
            log(self._folds, key, fold)
        else:
            self._ranks[rkey], self._counts[key], self._folds[key] = rank_fold, counts, fold
        return counts

    def forget_from(self, run: str, rank: int, step: int) -> None:
        """The steps of ``run`` from ``step`` on, and ``rank``'s summary, are about to be
        recounted from the rows (app.live.summary.resumed)."""
        for key in [k for k in (*self._counts, *self._folds) if k[0] == run and k[1] >= step]:
            self._undo.drop(self._counts, key)
            self._undo.drop(self._folds, key)
        self._undo.drop(self._ranks, (run, rank))

    def flush(self, conn: sqlite3.Connection) -> None:
        for (run, step), (n, slowest, attempt, loss) in self._folds.items():
            conn.execute(summary.ADD_STEP_ROWS, (run, step, slowest, n, attempt, loss))
        for (run, rank), (attempt, step, n) in self._ranks.items():
            conn.execute(summary.ADD_RANK_ROWS, (run, rank, attempt, step, n))
        self._folds.clear()
        self._ranks.clear()

    def clear(self) -> None:
        """The transaction ended (committed or rolled back, the undo log already applied)."""
        self._counts.clear()
        self._folds.clear()
        self._ranks.clear()
