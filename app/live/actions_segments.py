"""A run's per-action events as immutable Parquet segments, derived from the SQLite store
(issue 25): the columnar copy whole-run queries read (app/live/actions_query.py).

SQLite stays the one durable store; a segment is a cache of its rows, so deleting one, or
the whole directory, is always safe: the next query rebuilds it. A segment holds the
actions of the run's ``steps`` rows with ids ``first..last`` (``<first>-<last>.parquet``):
ids only grow (one writer, rows never deleted), so catching up is reading the rows past
the last segment's last id. Rows of a dead attempt are kept here too, as in SQLite, and
left out at query time by the store's own rule (actions_query.current).

One row per action: id, rank, step, attempt, t0, dp, pp, tp, cp, ep, kind, microbatch,
chunk, start, end, peer, and ``covered`` (below); cp and ep are 0 in a run without them
(the stored JSON leaves a 0 out). Each segment names its layout in its footer
(actions_compact.LAYOUT): one of another layout, or none, is dropped with its run's others
and rebuilt. A record without events keeps one row whose
kind is NULL, so its attempt still counts in the rule that decides which rows are current.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import duckdb

from app.core.inputs.protocol import MAX_FRAME_BYTES
from app.live.actions_compact import FORMAT, LAYOUT, SEGMENT, compact, drop_covered
from app.live.schema import connect

log = logging.getLogger("meshscope.live")
T = TypeVar("T")
# The stored record's canonical JSON (app/core/inputs/protocol_fast.record_json) as DuckDB
# reads it: explicit types, no inference over a sample; keys not named here are skipped.
EVENT = (
    "STRUCT(kind VARCHAR, microbatch INTEGER, chunk INTEGER, start DOUBLE,"
    ' "end" DOUBLE, peer INTEGER)'
)
RECORD = (
    "STRUCT(rank INTEGER, step BIGINT, attempt INTEGER, t0 DOUBLE,"
    " coord STRUCT(dp INTEGER, pp INTEGER, tp INTEGER, cp INTEGER, ep INTEGER),"
    f" events {EVENT}[])"
)
COLUMNS = "{'id': 'BIGINT', 'r': '" + RECORD.replace("'", "''") + "'}"
# A stored record is at most one frame (8 MiB); DuckDB's JSON buffers are sized from the
# largest object allowed, so a bigger bound costs memory on every catch-up.
# A record with no events unnests to one NULL action instead of none (see the docstring).
# ``covered``: seconds of a compute action (F/B/W) under the record's waits (tp, dp,
# pp_recv, cp, ep: app/core/traces/stragglers.py WAITS), their union as that module's
# intervals.covered takes it, for the whole-run stragglers' compute; 0 for other kinds.
# Found once per record, in its own event list: ``clip`` is each wait over the action cut
# to it, sorted, and each adds what it reaches past the ends of those before it. No query
# then joins a run's actions with themselves.
CLIP = """CASE WHEN e.kind IN ('F', 'B', 'W') THEN list_sort(list_transform(
    list_filter(r.events, lambda w: w.kind IN ('tp', 'dp', 'pp_recv', 'cp', 'ep')
                AND w.start < e."end" AND w."end" > e.start),
    lambda w: [greatest(w.start, e.start), least(w."end", e."end")])) ELSE [] END"""
ACTION = f"""lambda e: struct_pack(kind := e.kind, microbatch := e.microbatch,
    chunk := e.chunk, start := e.start, "end" := e."end", peer := e.peer, clip := {CLIP})"""
COVERED = """coalesce(list_sum(list_transform(e.clip, lambda x, i: greatest(0, x[2] - greatest(
    x[1], coalesce(list_max(list_transform(list_slice(e.clip, 1, i - 1), lambda y: y[2])),
                   x[1]))))), 0)"""
UNNEST = f"""
SELECT id, r.rank AS rank, r.step AS step, r.attempt AS attempt, r.t0 AS t0,
  r.coord.dp AS dp, r.coord.pp AS pp, r.coord.tp AS tp,
  coalesce(r.coord.cp, 0) AS cp, coalesce(r.coord.ep, 0) AS ep,
  e.kind AS kind, e.microbatch AS microbatch, e.chunk AS chunk, e.start AS start,
  e."end" AS "end", e.peer AS peer, {COVERED} AS covered
FROM (SELECT id, r, unnest(CASE WHEN len(r.events) = 0 THEN [NULL]
                                ELSE list_transform(r.events, {ACTION}) END) AS e
      FROM read_json($src, format = 'newline_delimited', columns = {COLUMNS},
                     maximum_object_size = {2 * MAX_FRAME_BYTES}))
"""


# How many of the segments name this layout in their footer (actions_compact.FORMAT).
LAYOUT_SQL = """SELECT count(DISTINCT file_name) FROM parquet_kv_metadata(?)
WHERE decode(key) = 'meshscope_layout' AND decode(value) = ?"""


# A segment's write: 1,024 ranks' 20k-record chunk peaked at ~290 MiB RSS in all under it
# (bench/bench_actions.py); DuckDB spills past its limit.
WRITE_MEMORY = "256MB"


def duck(memory: str = "1GB", threads: int = 2) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB bounded in memory and threads (it spills past the limit), with
    no progress bar on the server's stderr."""
    con = duckdb.connect(config={"memory_limit": memory, "threads": threads})
    con.execute("SET enable_progress_bar = false")
    return con


class Segments:
    """The segments of every run of one database, and a lock per run: catch-up and the
    queries that read the files hold it, so no query sees a half-written directory."""

    def __init__(
        self,
        db: Path,
        directory: Path | None = None,
        readonly: bool = False,
        chunk: int = 20_000,
        merge_at: int = 16,
    ) -> None:
        self.db = Path(db)
        self.chunk = chunk
        self.merge_at = merge_at  # small segments at the end merged into one (actions_compact)
        self.readonly = readonly
        self.wanted = Path(directory) if directory else self.db.with_name(self.db.name + ".actions")
        self._root: Path | None = None
        self._temp: Path | None = None
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._checked: dict[str, list[str]] = {}  # run -> its segments as last checked
        self._closing = threading.Event()  # a catch-up stops at its next chunk: shutdown

    # -- where ---------------------------------------------------------------------------------
    def root(self) -> Path:
        """The segments directory, or a temporary one when the database is read-only or the
        directory cannot be written: said once in the log, never a failed request."""
        with self._guard:
            if self._root is None:
                self._root = self._pick()
            return self._root

    def _pick(self) -> Path:
        why = "the database is read-only" if self.readonly else _unwritable(self.wanted)
        if why is None:
            return self.wanted
        self._temp = Path(tempfile.mkdtemp(prefix="meshscope-actions-"))
        log.warning("action segments in %s, not %s: %s (rebuilt after a restart)",
                    self._temp, self.wanted, why)  # fmt: skip
        return self._temp

    def close(self) -> None:
        self._closing.set()
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)

    def lock(self, run: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(run, threading.Lock())

    def files(self, run: str) -> list[Path]:
        """The run's segments, in id order."""
        folder = self.root() / run
        if not folder.is_dir():
            return []
        return drop_covered([p for p in folder.iterdir() if SEGMENT.match(p.name)])

    def wipe(self, run: str) -> None:
        shutil.rmtree(self.root() / run, ignore_errors=True)
        self._checked.pop(run, None)
        (self.root() / run).mkdir(parents=True, exist_ok=True)

    # -- queries -------------------------------------------------------------------------------
    def query(self, run: str, fn: Callable[[duckdb.DuckDBPyConnection, list[Path]], T]) -> T:
        """``fn(con, segments)`` after catching up, under the run's lock. A segment DuckDB
        cannot read (cut short, corrupt, deleted under us) is rebuilt from SQLite, once."""
        with self.lock(run):
            for tried in (False, True):
                files = self.catch_up(run)
                con = duck()
                try:
                    return fn(con, files)
                # A segment of another layout (an older server's) binds no longer: rebuilt too.
                except (duckdb.IOException, duckdb.InvalidInputException,
                        duckdb.BinderException) as err:  # fmt: skip
                    if tried:
                        raise
                    log.warning("action segments of %s unreadable, rebuilt: %s", run, err)
                    self.wipe(run)
                finally:
                    con.close()
        raise AssertionError("unreachable")

    def warm(self, run: str) -> None:
        """Catch the run's segments up now (after an import stored it), so its first whole-run
        question is answered from them instead of waiting for the catch-up (~160 us a record).
        Derived data: a failure is logged, and the next query tries again."""
        try:
            self.query(run, lambda con, files: None)
        except (duckdb.Error, OSError, sqlite3.Error) as err:
            log.warning("action segments of %s not caught up after its import: %s", run, err)

    # -- catch-up ------------------------------------------------------------------------------
    def catch_up(self, run: str) -> list[Path]:
        """Write the rows stored since the last segment as new segments (``chunk`` rows
        each, so memory is bounded by a chunk, not the run); the run's lock is held."""
        folder = self.root() / run
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(".tmp-*"):  # a catch-up killed before its rename
            stale.unlink(missing_ok=True)
        conn = connect(self.db, readonly=True)
        conn.text_factory = bytes  # written as read: no decoding to str and back
        try:
            last = self._checked_last(conn, run)
            while (written := self._write(conn, folder, run, last)) is not None:
                if self._closing.is_set():  # what is written stays; the rest waits
                    break
                last = written
                self._checked[run] = [p.name for p in self.files(run)]
            closing = self._closing.is_set()
            if not closing and compact(
                folder, self.files(run), partial(duck, WRITE_MEMORY), self.merge_at
            ):
                self._checked[run] = [p.name for p in self.files(run)]
        finally:
            conn.close()
        return self.files(run)

    def _checked_last(self, conn: sqlite3.Connection, run: str) -> int:
        """The last id the segments hold, checked against SQLite whenever they are not the
        files this object last wrote or checked: as many records as the store has up to that
        id (else a segment went missing, or the database was replaced under the same name),
        or the run's segments are dropped and rebuilt; so are they when one is of another
        layout (an older server's: actions_compact.LAYOUT)."""
        files = self.files(run)
        if not files:
            self._checked.pop(run, None)
            return 0
        last = int(SEGMENT.match(files[-1].name)[2])
        if self._checked.get(run) == [p.name for p in files]:
            return last
        stored = conn.execute(
            "SELECT COUNT(*) FROM steps WHERE run = ? AND id <= ?", (run, last)
        ).fetchone()[0]
        names = [str(f) for f in files]
        con = duck()
        try:
            (ours,) = con.execute(LAYOUT_SQL, [names, LAYOUT]).fetchone()
            if ours == len(files):
                sql = "SELECT COUNT(DISTINCT id) FROM read_parquet(?)"
                held = con.execute(sql, [names]).fetchone()[0]
            else:  # an older server's segments: their columns mean something else
                log.warning("action segments of %s of another layout, rebuilt", run)
                held = -1
        except duckdb.Error as err:  # a corrupt segment: rebuilt below
            log.warning("action segments of %s unreadable, rebuilt: %s", run, err)
            held = -1
        finally:
            con.close()
        if held != stored:
            self.wipe(run)
            return 0
        self._checked[run] = [p.name for p in files]
        return last

    def _write(self, conn: sqlite3.Connection, folder: Path, run: str, after: int) -> int | None:
        """One segment of the next ``chunk`` rows past id ``after``, streamed from SQLite as
        NDJSON to a temporary file (one row in memory at a time), read typed by DuckDB and
        written as Parquet under a temporary name, renamed when whole; its last id, or None
        when there was no row."""
        fd, ndjson = tempfile.mkstemp(prefix=".tmp-", suffix=".ndjson", dir=folder)
        first = last = None
        try:
            with os.fdopen(fd, "wb") as out:
                rows = conn.execute(
                    "SELECT id, record FROM steps WHERE run = ? AND id > ? ORDER BY id LIMIT ?",
                    (run, after, self.chunk),
                )
                for row_id, text in rows:
                    out.write(b'{"id":%d,"r":%s}\n' % (row_id, text))
                    first = row_id if first is None else first
                    last = row_id
            if last is None:
                return None
            part = folder / f".tmp-{first}-{last}.parquet"
            con = duck(WRITE_MEMORY)
            try:
                sql = UNNEST.replace("$src", f"'{quoted(Path(ndjson))}'")
                con.execute(f"COPY ({sql}) TO '{quoted(part)}' ({FORMAT})")
            finally:
                con.close()
            os.replace(part, folder / f"{first}-{last}.parquet")
            return last
        finally:
            Path(ndjson).unlink(missing_ok=True)


def quoted(path: Path) -> str:
    """A path inside a SQL string literal (COPY takes no parameters)."""
    return str(path).replace("'", "''")


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold segments, or None when it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tmp-"):
            pass
    except OSError as err:
        return f"{folder} is not writable ({err.strerror or err})"
    return None
