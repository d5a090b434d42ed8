"""Read side of the store: one read-only connection per thread (WAL readers never block
the writer), queries for the HTTP API, the live page and the liveness restart."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from app.live.schema import summarised
from app.live.store import SCHEMA, connect

RUN_COLUMNS = "run, world, steps, attempt, status, created, updated, last_event, failed_at, reason"


class Reader:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        boot = connect(self.path)  # a reader may come up before the writer: make the tables
        boot.executescript(SCHEMA)
        boot.close()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect(self.path, readonly=True)
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()

    def summaries(self) -> bool:
        """Read the per-run summaries (app.live.summary), or count the rows as before: a
        read-only database written before the summaries has none, and no writer to add them."""
        return summarised(self._conn())

    def _rows(self, sql: str, args: tuple = ()) -> list[dict[str, Any]]:
        cur = self._conn().execute(sql, args)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # -- runs --------------------------------------------------------------------------------
    def runs(self, limit: int = 500) -> list[dict[str, Any]]:
        """Newest first, each with its last step and how many rank-steps it holds."""
        if self.summaries():
            return self._rows(
                f"SELECT {RUN_COLUMNS}, info,"
                " (SELECT MAX(last_step) FROM rank_summary s WHERE s.run = r.run) AS last_step,"
                " (SELECT COALESCE(SUM(rows), 0) FROM rank_summary s WHERE s.run = r.run)"
                " AS records FROM runs r ORDER BY created DESC LIMIT ?",
                (limit,),
            )
        return self._rows(
            f"SELECT {RUN_COLUMNS}, info,"
            " (SELECT MAX(step) FROM steps s WHERE s.run = r.run AND superseded = 0) AS last_step,"
            " (SELECT COUNT(*) FROM steps s WHERE s.run = r.run AND superseded = 0) AS records"
            " FROM runs r ORDER BY created DESC LIMIT ?",
            (limit,),
        )

    def run(self, run: str) -> dict[str, Any] | None:
        rows = self._rows(f"SELECT {RUN_COLUMNS}, info FROM runs WHERE run = ?", (run,))
        return rows[0] if rows else None

    def active_runs(self) -> list[dict[str, Any]]:
        """Runs a restarted server should keep watching: not done and not failed."""
        return self._rows(
            f"SELECT {RUN_COLUMNS}, info FROM runs WHERE status IN ('running', 'stale')"
        )

    def rank_cursors(self, run: str) -> dict[int, tuple[int, int]]:
        """Per rank, the highest current (attempt, step)."""
        return {rank: (attempt, step) for rank, (attempt, step, _) in self.rank_rows(run).items()}

    def rank_rows(self, run: str, recount: bool = False) -> dict[int, tuple[int, int, int]]:
        """Per rank, its current rows: (highest attempt, highest step, how many). ``recount``:
        from the rows themselves, what the summary stands for."""
        if self.summaries() and not recount:
            sql = "SELECT rank, attempt, last_step, rows FROM rank_summary WHERE run = ?"
        else:
            sql = (
                "SELECT rank, MAX(attempt), MAX(step), COUNT(*) FROM steps"
                " WHERE run = ? AND superseded = 0 GROUP BY rank"
            )
        rows = self._conn().execute(sql, (run,))
        return {rank: (attempt, step, n) for rank, attempt, step, n in rows}

    def stops(self, run: str, attempt: int) -> dict[int, dict[str, Any]]:
        """Per rank, its partial record of ``attempt`` (the step it did not finish), parsed;
        the latest step when a rank has several."""
        rows = self._conn().execute(
            "SELECT rank, record FROM stops WHERE run = ? AND attempt = ? ORDER BY step",
            (run, attempt),
        )
        return {rank: json.loads(text) for rank, text in rows}

    def last_record(self, run: str, rank: int) -> dict[str, Any] | None:
        """The rank's newest current record, parsed (its events say how its step ended)."""
        row = (
            self._conn()
            .execute(
                "SELECT record FROM steps WHERE run = ? AND rank = ? AND superseded = 0"
                " ORDER BY step DESC LIMIT 1",
                (run, rank),
            )
            .fetchone()
        )
        return None if row is None else json.loads(row[0])

    def first_dead(self, run: str) -> int | None:
        """The rank liveness saw dead first in the run's latest failure, if it logged one."""
        row = (
            self._conn()
            .execute(
                "SELECT rank FROM events WHERE run = ? AND kind = 'first_dead'"
                " ORDER BY id DESC LIMIT 1",
                (run,),
            )
            .fetchone()
        )
        return None if row is None else row[0]

    def trend(self, run: str, limit: int = 2000, recount: bool = False) -> list[dict[str, Any]]:
        """Per step: the slowest rank's step time, how many ranks reported, latest first
        reversed into step order. Only current (not superseded) rows count."""
        if self.summaries() and not recount:
            sql = (
                "SELECT step, step_time_s, ranks, attempt, loss FROM step_summary"
                " WHERE run = ? ORDER BY step DESC LIMIT ?"
            )
        else:
            sql = (
                "SELECT step, MAX(step_time_s) AS step_time_s, COUNT(*) AS ranks,"
                " MAX(attempt) AS attempt, MIN(loss) AS loss FROM steps"
                " WHERE run = ? AND superseded = 0 GROUP BY step ORDER BY step DESC LIMIT ?"
            )
        return self._rows(sql, (run, limit))[::-1]

    def trend_json(self, run: str, limit: int = 2000) -> str:
        """``trend`` as a JSON array built by SQLite's json1 (sqlite.org/json1.html): the
        run's answer spent more time making 2,000 dicts and encoding them than reading them.
        Numbers as SQLite prints a REAL (15 significant digits)."""
        if not self.summaries():
            return json.dumps(self.trend(run, limit), allow_nan=False, separators=(",", ":"))
        (text,) = (
            self._conn()
            .execute(
                "SELECT json_group_array(json_object('step', step, 'step_time_s', step_time_s,"
                " 'ranks', ranks, 'attempt', attempt, 'loss', loss)) FROM (SELECT * FROM"
                " (SELECT * FROM step_summary WHERE run = ? ORDER BY step DESC LIMIT ?)"
                " ORDER BY step)",
                (run, limit),
            )
            .fetchone()
        )
        return text

    def events(self, run: str, limit: int = 200) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT rank, at, kind, detail FROM events WHERE run = ? ORDER BY id DESC LIMIT ?",
            (run, limit),
        )
        return rows[::-1]

    # -- steps -------------------------------------------------------------------------------
    def steps(self, run: str, since: int, limit: int) -> tuple[list[dict], int | None]:
        """``steps_text``'s records, parsed."""
        texts, next_since = self.steps_text(run, since, limit)
        return [json.loads(text) for text in texts], next_since

    def steps_text(self, run: str, since: int, limit: int) -> tuple[list[str], int | None]:
        """Current records with step > since, whole steps only, at most ``limit`` records
        (one step is returned whole even past the limit), as stored: canonical JSON, so a
        page is spliced from them, never parsed and dumped again (a json.dumps of an 18 MB
        page held the GIL, and so the event loop, for ~2 s here). Returns (texts, next
        since)."""
        rows = (
            self._conn()
            .execute(
                "SELECT step, record FROM steps WHERE run = ? AND superseded = 0 AND step > ?"
                " ORDER BY step, rank LIMIT ?",
                (run, since, limit + 1),
            )
            .fetchall()
        )
        more = len(rows) > limit
        if more:
            last = rows[-1][0]
            whole = [r for r in rows if r[0] != last]
            rows = whole or self._one_step(run, last)
        return [text for _, text in rows], (rows[-1][0] if more and rows else None)

    def _one_step(self, run: str, step: int) -> list[tuple[int, str]]:
        return (
            self._conn()
            .execute(
                "SELECT step, record FROM steps WHERE run = ? AND superseded = 0 AND step = ?"
                " ORDER BY rank",
                (run, step),
            )
            .fetchall()
        )

    def window(self, run: str, first: int, last: int) -> list[str]:
        """Record JSON of current rows with first <= step <= last, for the analysis."""
        rows = self._conn().execute(
            "SELECT record FROM steps WHERE run = ? AND superseded = 0 AND step BETWEEN ? AND ?"
            " ORDER BY step, rank",
            (run, first, last),
        )
        return [text for (text,) in rows]

    def signature(self, run: str, first: int, last: int) -> tuple:
        """What the analysis of a window depends on: which (step, rank, attempt) rows."""
        rows = self._conn().execute(
            "SELECT step, rank, attempt FROM steps WHERE run = ? AND superseded = 0"
            " AND step BETWEEN ? AND ? ORDER BY step, rank",
            (run, first, last),
        )
        return tuple(rows.fetchall())

    def superseded(self, run: str, recount: bool = False) -> int:
        if self.summaries() and not recount:
            sql = "SELECT COALESCE(SUM(superseded), 0) FROM run_summary WHERE run = ?"
        else:
            sql = "SELECT COUNT(*) FROM steps WHERE run = ? AND superseded = 1"
        (n,) = self._conn().execute(sql, (run,)).fetchone()
        return n
