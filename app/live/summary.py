"""Per-run summaries kept as rows are written, so reading a run costs O(ranks + trend), not
O(records): ``/api/runs/{run}`` recounted a 1M-record run's rows on every call (1.94 s,
issue 26 item 10).

Three tables, changed in the same transaction as the rows they summarise, so a rollback
(a full disk, a row refused in its savepoint) takes them back with the rows and no
in-memory cache is involved (app.live.undo has nothing to restore for them):

- ``rank_summary(run, rank)``: over the rank's current rows, the highest attempt, the
  highest step and how many (``Reader.rank_rows``: ranks' cursors and completeness);
- ``step_summary(run, step)``: over the step's current rows, the slowest step time, how many
  ranks, the highest attempt and the lowest loss (``Reader.trend``; a step is complete
  when its count reaches the world);
- ``run_summary(run)``: rows kept but superseded.

A current row adds to its rank's and step's summary (app.live.step_tally: each once per
transaction); a resume that supersedes rows
recomputes the rank's summary and the steps from the resume point on (rare, bounded by
what it superseded). ``RECOMPUTE_*`` are the queries the summaries stand for: the
migration fills the tables with them, and the tests compare them with what was kept.
"""

from __future__ import annotations

import sqlite3

VERSION = 1  # PRAGMA user_version once the summaries are filled (app.live.schema.migrate)

TABLES = """
CREATE TABLE IF NOT EXISTS rank_summary (
  run TEXT NOT NULL, rank INTEGER NOT NULL, attempt INTEGER NOT NULL,
  last_step INTEGER NOT NULL, rows INTEGER NOT NULL, PRIMARY KEY (run, rank)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS step_summary (
  run TEXT NOT NULL, step INTEGER NOT NULL, step_time_s REAL NOT NULL, ranks INTEGER NOT NULL,
  attempt INTEGER NOT NULL, loss REAL, PRIMARY KEY (run, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_summary (
  run TEXT PRIMARY KEY, superseded INTEGER NOT NULL DEFAULT 0
);
"""
RECOMPUTE_RANKS = (
    "SELECT run, rank, MAX(attempt), MAX(step), COUNT(*) FROM steps"
    " WHERE superseded = 0 AND run = ?1 AND (?2 IS NULL OR rank = ?2) GROUP BY run, rank"
)
RECOMPUTE_STEPS = (
    "SELECT run, step, MAX(step_time_s), COUNT(*), MAX(attempt), MIN(loss) FROM steps"
    " WHERE superseded = 0 AND run = ?1 AND step >= ?2 GROUP BY run, step"
)
RECOMPUTE_SUPERSEDED = "SELECT run, COUNT(*) FROM steps WHERE superseded = 1 GROUP BY run"

# Several current rows of one rank at once (app.live.step_tally folds a transaction's).
ADD_RANK_ROWS = """INSERT INTO rank_summary (run, rank, attempt, last_step, rows)
  VALUES (?, ?, ?, ?, ?) ON CONFLICT (run, rank) DO UPDATE SET
  attempt = MAX(attempt, excluded.attempt), last_step = MAX(last_step, excluded.last_step),
  rows = rows + excluded.rows"""
# Several current rows of one step at once (app.live.step_tally folds a transaction's).
# MIN(loss): SQL's aggregate skips NULLs, the two-argument MIN does not, hence the CASE.
ADD_STEP_ROWS = """INSERT INTO step_summary (run, step, step_time_s, ranks, attempt, loss)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run, step) DO UPDATE SET
  step_time_s = MAX(step_time_s, excluded.step_time_s), ranks = ranks + excluded.ranks,
  attempt = MAX(attempt, excluded.attempt),
  loss = CASE WHEN excluded.loss IS NULL THEN loss WHEN loss IS NULL THEN excluded.loss
              ELSE MIN(loss, excluded.loss) END"""
_ADD_SUPERSEDED = """INSERT INTO run_summary (run, superseded) VALUES (?, ?)
  ON CONFLICT (run) DO UPDATE SET superseded = superseded + excluded.superseded"""


def add_superseded(conn: sqlite3.Connection, run: str, n: int) -> None:
    if n:
        conn.execute(_ADD_SUPERSEDED, (run, n))


def resumed(conn: sqlite3.Connection, run: str, rank: int, step: int) -> None:
    """Rows of ``rank`` from ``step`` on were superseded: recount what they were part of."""
    conn.execute("DELETE FROM rank_summary WHERE run = ? AND rank = ?", (run, rank))
    conn.execute(
        "INSERT INTO rank_summary (run, rank, attempt, last_step, rows) " + RECOMPUTE_RANKS,
        (run, rank),
    )
    conn.execute("DELETE FROM step_summary WHERE run = ? AND step >= ?", (run, step))
    conn.execute(
        "INSERT INTO step_summary (run, step, step_time_s, ranks, attempt, loss) "
        + RECOMPUTE_STEPS,
        (run, step),
    )


def step_of(conn: sqlite3.Connection, run: str, step: int) -> tuple[int, float, int] | None:
    return conn.execute(
        "SELECT ranks, step_time_s, attempt FROM step_summary WHERE run = ? AND step = ?",
        (run, step),
    ).fetchone()


def backfill(conn: sqlite3.Connection) -> None:
    """Fill the summaries from the rows (a database written before they existed); inside
    the caller's transaction."""
    conn.execute("DELETE FROM rank_summary")
    conn.execute("DELETE FROM step_summary")
    conn.execute("DELETE FROM run_summary")
    conn.execute(
        "INSERT INTO rank_summary (run, rank, attempt, last_step, rows)"
        " SELECT run, rank, MAX(attempt), MAX(step), COUNT(*) FROM steps"
        " WHERE superseded = 0 GROUP BY run, rank"
    )
    conn.execute(
        "INSERT INTO step_summary (run, step, step_time_s, ranks, attempt, loss)"
        " SELECT run, step, MAX(step_time_s), COUNT(*), MAX(attempt), MIN(loss) FROM steps"
        " WHERE superseded = 0 GROUP BY run, step"
    )
    conn.execute("INSERT INTO run_summary (run, superseded) " + RECOMPUTE_SUPERSEDED)
