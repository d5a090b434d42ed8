"""SQLite store of measured runs: ``runs``, ``steps`` (one row per rank-step-attempt) and
``events`` (the run's lifecycle: hellos, stale and dead ranks, status changes) and ``stops``
(the partial record of a step a rank did not finish, ``ProbeRecord.stopped``: what it was
doing when it failed; kept apart so no count, trend or analysis of finished steps sees it).

A step row keeps the validated record (its timeline events included) as canonical JSON,
plus the breakdown columns the lists and metrics read. Writes happen on one connection from
one thread (``app.live.writer``), a batch per transaction; a frame is acknowledged only
after its transaction commits, and ``synchronous=FULL`` makes a commit survive a crash of
the process and of the machine. Readers use their own connections: WAL lets them read
while the writer writes.

Idempotency and resumes (app.core.inputs.protocol): the key is (run, rank, step, attempt), so a
resent record is ignored. A record of attempt a at step s supersedes every row of the same
rank with a lower attempt at step >= s: the dead attempt's steps after the resume point are
kept, marked ``superseded``, and never mixed into what is served.

A failing row fails alone. When a batch raises because of one op's data (a value SQLite
cannot hold, a constraint), the batch is rolled back and run again with each op inside its
own savepoint: the op that fails again is rolled back to its savepoint and answered with
``RowRejected``, and every other op commits. A fault of the store itself (disk full, I/O)
still fails the whole batch, so nothing is acknowledged that was not written. Either way
the in-memory caches are put back with the rows (app.live.undo).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar

from app.core.fidelity.measured import StepSplit, split
from app.core.inputs.protocol import RunInfo
from app.core.inputs.protocol_fast import AnyRecord, record_json
from app.live import summary
from app.live.schema import INSERT_STEP, SCHEMA, connect, migrate
from app.live.step_tally import StepTally
from app.live.undo import UndoLog


class Sink(Protocol):
    def append(self, result: object, /) -> None: ...


F = TypeVar("F", bound=Sink)

__all__ = ["SCHEMA", "Outcome", "RowRejected", "StepDone", "Store", "Welcome", "connect"]

Cursor = tuple[int, int]  # (attempt, step), the protocol's order


class RowRejected(Exception):
    """The store refused this one op (the result in its slot); the rest of its batch
    committed. Permanent: resending the same frame fails the same way."""


def _row_fault(err: Exception) -> bool:
    """A fault of one op's data, which retrying the batch without it cures, as opposed to
    a fault of the store (sqlite3.OperationalError for disk full or I/O, OSError, memory)."""
    if isinstance(err, (sqlite3.IntegrityError, sqlite3.DataError)):
        return True
    return not isinstance(err, (sqlite3.DatabaseError, OSError, MemoryError))


@dataclass(frozen=True)
class StepDone:
    """Every rank of the world has a current record of this step."""

    step: int
    attempt: int
    step_time_s: float  # the slowest rank: the step ends when its last rank does


@dataclass(frozen=True)
class Welcome:
    """The answer to a hello: the rank's stored cursor, or why the run refuses it."""

    cursor: Cursor | None  # None: nothing stored for this rank yet
    conflict: str | None = None


class Outcome(NamedTuple):
    """A record's result (a named tuple: one per stored record, ~1 us less than a frozen
    dataclass to make)."""

    stored: bool  # False: a resend of a row we already hold
    superseded: bool  # stored, but belongs to a dead attempt
    breakdown: StepSplit  # its seconds per label (measured.split), the row's columns
    done: StepDone | None = None


def _same_run(old: RunInfo, new: RunInfo) -> str | None:
    """None when ``new`` continues ``old`` (only the step count may change), else why not."""
    a, b = old.model_dump(exclude={"steps"}), new.model_dump(exclude={"steps"})
    diff = [f"{k}: stored {a[k]!r}, hello {b[k]!r}" for k in a if a[k] != b[k]]
    return "; ".join(diff) or None


class Store:
    """The write side (one thread); ``app.live.store_read.Reader`` is the read side."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path)
        # Read-only (app.live.db_claim found SQLite cannot write it): no schema to make, and
        # the writer refuses every op before it gets here.
        self.readonly = readonly
        self.conn = connect(self.path, readonly=readonly)
        if not readonly:
            migrate(self.conn)  # the tables, and the per-run summaries of an older database
        self._world: dict[str, int] = {}
        self._starts: dict[tuple[str, int], dict[int, int]] = {}  # attempt -> first step
        self._undo = UndoLog()  # cache changes of the open transaction
        self._touched: dict[str, tuple[float, float]] = {}  # run -> (updated, last_event)
        self._tally = StepTally(self._undo)
        self._isolating = False  # the batch runs op by op (_run)
        self._lock = threading.Lock()  # one writer thread; the lock guards misuse

    def close(self) -> None:
        self.conn.close()

    # -- transactions ------------------------------------------------------------------------
    def transaction(self, ops: list[tuple[str, tuple]]) -> list[object]:
        """Run ``(method, args)`` ops in one transaction; results in order, after commit. An
        op whose data the store refuses gets a ``RowRejected`` as its result instead."""
        return self.folded(ops, list)

    def folded(self, ops: Iterable[tuple[str, tuple]], make: Callable[[], F]) -> F:
        """``transaction``, each result handed in order to ``make()``'s ``append`` instead
        of kept in a list: an import's million records need their count, not their
        results. A batch retried op by op gets a fresh ``make()``."""
        with self._lock:
            try:
                return self._run(ops, isolate=False, sink=make())
            except Exception as err:
                if not _row_fault(err):
                    raise
            # The retry pays two statements per op, only for a batch that held a bad row.
            return self._run(ops, isolate=True, sink=make())

    def _run(self, ops: Iterable[tuple[str, tuple]], isolate: bool, sink: F) -> F:
        # Only op by op must a refused op's changes of the transaction's own folds go back
        # alone (the undo log); a whole batch that fails drops them all below.
        self._tally.isolating = self._isolating = isolate
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for n, a in ops:
                sink.append(self._isolated(n, a) if isolate else self._op(n, a))
            self._flush_touched()
            self._tally.flush(self.conn)
            self.conn.execute("COMMIT")
        except BaseException:
            # The caches first: what follows may raise too. SQLite may already have rolled
            # back by itself (SQLITE_FULL, IOERR), and then a ROLLBACK raises "no
            # transaction is active", which once skipped this and kept a cached start
            # step of the undone transaction (issue 26, item 6).
            self._undo.undo()
            self._tally.clear()
            self._touched.clear()
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self._undo.forget()
        self._tally.clear()
        return sink

    def _op(self, name: str, args: tuple) -> object:
        return getattr(self, "_" + name)(*args)

    def _isolated(self, name: str, args: tuple) -> object:
        self.conn.execute("SAVEPOINT op")
        mark = self._undo.mark()
        try:
            result = self._op(name, args)
        except Exception as err:
            if not _row_fault(err):
                raise
            self._undo.undo(mark)  # this op's cache changes go with its rows
            self.conn.execute("ROLLBACK TO op")
            self.conn.execute("RELEASE op")
            return RowRejected(f"{type(err).__name__}: {str(err)[:200]}")
        self.conn.execute("RELEASE op")
        return result

    # -- operations (inside a transaction) ---------------------------------------------------
    def _hello(self, info: RunInfo, rank: int, attempt: int, now: float) -> Welcome:
        """Create or continue the run and return the rank's stored cursor. A conflict is
        returned, not raised: raising would roll back the other producers' batch."""
        row = self.conn.execute("SELECT info FROM runs WHERE run = ?", (info.run,)).fetchone()
        if row is None:
            self.conn.execute(
                "INSERT INTO runs (run, info, world, steps, attempt, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (info.run, info.model_dump_json(), info.world_size, info.steps, attempt, now, now),
            )
        else:
            why = _same_run(RunInfo.model_validate_json(row[0]), info)
            if why:
                return Welcome(None, f"run {info.run!r} exists with another config: {why}")
            self.conn.execute(
                "UPDATE runs SET info = ?, steps = MAX(steps, ?), attempt = MAX(attempt, ?),"
                " updated = ? WHERE run = ?",
                (info.model_dump_json(), info.steps, attempt, now, info.run),
            )
        self._undo.set(self._world, info.run, info.world_size)
        # A stored partial record counts: it is the last thing that rank's spool holds.
        found = self.conn.execute(
            "SELECT attempt, step FROM steps WHERE run = ? AND rank = ?"
            " UNION ALL SELECT attempt, step FROM stops WHERE run = ? AND rank = ?"
            " ORDER BY attempt DESC, step DESC LIMIT 1",
            (info.run, rank, info.run, rank),
        ).fetchone()
        return Welcome(None if found is None else (found[0], found[1]))

    def _record(self, rec: AnyRecord, now: float) -> Outcome:
        # Summarised here, on the writer thread, to keep the event loop free for sockets.
        b, text = split(rec), record_json(rec)
        starts = self._starts.get((rec.run, rec.rank)) or self._attempt_starts(rec.run, rec.rank)
        superseded = False
        if len(starts) > 1 or rec.attempt not in starts:  # else no attempt is newer
            newer = [s for a, s in starts.items() if a > rec.attempt]
            superseded = bool(newer) and rec.step >= min(newer)
        row = (
            rec.run, rec.rank, rec.step, rec.attempt, int(superseded), rec.t0, b.step_time_s,
            b.compute_s, b.tp_s, b.dp_s, b.pp_wait_s, b.host_s, rec.loss, rec.mem, now, text,
            b.cp_s, b.ep_s,
        )  # fmt: skip
        if self.conn.execute(INSERT_STEP, row).rowcount == 0:
            return Outcome(False, superseded, b)
        # The common case (the attempt's start is known and not after this step) inline.
        n = 0 if rec.step >= starts.get(rec.attempt, rec.step + 1) else (
            self._supersede_older(rec, starts))  # fmt: skip
        if n or superseded:
            summary.add_superseded(self.conn, rec.run, n + int(superseded))
        found = None
        if n:  # recounted, this row included
            self._tally.forget_from(rec.run, rec.rank, rec.step)
            summary.resumed(self.conn, rec.run, rec.rank, rec.step)
        elif not superseded:
            found = self._tally.add_current(
                self.conn, rec.run, rec.rank, rec.step, rec.attempt, b.step_time_s, rec.loss
            )
        self._touch(rec.run, now, rec.t0 + b.step_time_s)
        done = None if superseded else self._step_done(rec.run, rec.step, found)
        return Outcome(True, superseded, b, done)

    def _supersede_older(self, rec: AnyRecord, starts: dict[int, int]) -> int:
        """Mark the rank's rows of lower attempts at step >= rec.step superseded when the
        record starts its attempt earlier than known; how many. A rank's first record
        starts attempt 0 but marks nothing: recounting the run's steps then (O(its rows),
        per rank) was most of a 1,024-rank run's ingest CPU (issue 26 item 11)."""
        if rec.step >= starts.get(rec.attempt, rec.step + 1):
            return 0
        older = any(a < rec.attempt for a in starts)
        self._undo.set(starts, rec.attempt, rec.step)
        if not older:
            return 0
        return self.conn.execute(
            "UPDATE steps SET superseded = 1 WHERE run = ? AND rank = ? AND attempt < ?"
            " AND step >= ? AND superseded = 0",
            (rec.run, rec.rank, rec.attempt, rec.step),
        ).rowcount

    def _stop(self, rec: AnyRecord, now: float) -> bool:
        """A partial record (``rec.stopped``): the step this rank did not finish. Stored
        once (a resend is ignored); True when it is new."""
        row = (rec.run, rec.rank, rec.step, rec.attempt, rec.t0, now, rec.stopped or "",
               record_json(rec))  # fmt: skip
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO stops (run, rank, step, attempt, t0, received, reason, record)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        return cur.rowcount > 0

    def _status(self, run: str, status: str, failed_at: float | None, reason: str, now: float):
        self.conn.execute(
            "UPDATE runs SET status = ?, failed_at = ?, reason = ?, updated = ? WHERE run = ?",
            (status, failed_at, reason, now, run),
        )

    def _event(self, run: str, rank: int | None, kind: str, detail: str, at: float) -> None:
        self.conn.execute(
            "INSERT INTO events (run, rank, at, kind, detail) VALUES (?, ?, ?, ?, ?)",
            (run, rank, at, kind, detail),
        )

    # -- helpers -------------------------------------------------------------------------------
    def _touch(self, run: str, now: float, last_event: float) -> None:
        """A stored record's times, for the run's row once per transaction (_flush_touched);
        op by op through the undo log: a record refused in its savepoint takes them back."""
        seen = self._touched.get(run)
        if seen is not None:  # max() of each, written out (a builtin call each)
            now, last_event = (now if now > seen[0] else seen[0]), (
                last_event if last_event > seen[1] else seen[1])  # fmt: skip
        value = (now, last_event)
        if self._isolating:
            self._undo.set(self._touched, run, value)
        else:
            self._touched[run] = value

    def _flush_touched(self) -> None:
        for run, (now, last_event) in self._touched.items():
            self.conn.execute(
                "UPDATE runs SET updated = MAX(updated, ?),"
                " last_event = MAX(COALESCE(last_event, 0), ?) WHERE run = ?",
                (now, last_event, run),
            )
        self._touched.clear()  # the undo log may still pop these keys: a no-op then

    def _attempt_starts(self, run: str, rank: int) -> dict[int, int]:
        key = (run, rank)
        if key not in self._starts:
            rows = self.conn.execute(
                "SELECT attempt, MIN(step) FROM steps WHERE run = ? AND rank = ? GROUP BY attempt",
                key,
            ).fetchall()
            self._undo.set(self._starts, key, {a: s for a, s in rows})
        return self._starts[key]

    def _step_done(self, run: str, step: int, found=None) -> StepDone | None:
        world = self._world.get(run)
        if world is None:
            row = self.conn.execute("SELECT world FROM runs WHERE run = ?", (run,)).fetchone()
            world = row[0] if row else 0
            self._undo.set(self._world, run, world)
        # The step's counts (app.live.step_tally) when the row added to them, else its
        # summary row: one key lookup, not a count of its rows.
        found = found or summary.step_of(self.conn, run, step)
        if found is None:
            return None
        n, slowest, attempt = found
        return StepDone(step, attempt, slowest) if world and n == world else None
