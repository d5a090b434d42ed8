"""The live store's tables and how every connection to them is opened (app.live.store writes,
app.live.store_read reads); see app.live.store for what the rows mean."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.live import summary

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS runs (
  run TEXT PRIMARY KEY, info TEXT NOT NULL, world INTEGER NOT NULL, steps INTEGER NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'running',
  created REAL NOT NULL, updated REAL NOT NULL, last_event REAL, failed_at REAL, reason TEXT
);
CREATE TABLE IF NOT EXISTS steps (
  id INTEGER PRIMARY KEY, run TEXT NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL,
  attempt INTEGER NOT NULL, superseded INTEGER NOT NULL DEFAULT 0, t0 REAL NOT NULL,
  step_time_s REAL NOT NULL, compute_s REAL NOT NULL, tp_s REAL NOT NULL, dp_s REAL NOT NULL,
  pp_wait_s REAL NOT NULL, host_s REAL NOT NULL, loss REAL, mem INTEGER,
  received REAL NOT NULL, record TEXT NOT NULL,
  cp_s REAL NOT NULL DEFAULT 0, ep_s REAL NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS steps_key ON steps(run, rank, step, attempt);
CREATE INDEX IF NOT EXISTS steps_current ON steps(run, step, rank) WHERE superseded = 0;
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY, run TEXT NOT NULL, rank INTEGER, at REAL NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS events_by_run ON events(run, id);
CREATE TABLE IF NOT EXISTS stops (
  run TEXT NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL, attempt INTEGER NOT NULL,
  t0 REAL NOT NULL, received REAL NOT NULL, reason TEXT NOT NULL, record TEXT NOT NULL,
  PRIMARY KEY (run, rank, step, attempt)
);
"""
    + summary.TABLES
)
INSERT_STEP = """INSERT OR IGNORE INTO steps (run, rank, step, attempt, superseded, t0,
  step_time_s, compute_s, tp_s, dp_s, pp_wait_s, host_s, loss, mem, received, record,
  cp_s, ep_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
# Columns added to a table after its first release: (table, column, declaration). A database
# written before one gains it at the writer's start (ALTER TABLE ADD COLUMN, sqlite.org/
# lang_altertable.html: a constant default fills the old rows without rewriting them).
ADDED_COLUMNS = (
    ("steps", "cp_s", "REAL NOT NULL DEFAULT 0"),  # issue 25: context-parallel seconds
    ("steps", "ep_s", "REAL NOT NULL DEFAULT 0"),  # issue 25: expert all-to-all seconds
)


def connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
    # A read-only connection cannot switch a database that is not in WAL mode yet, and
    # need not: the writer does that, and a read-only database is read as it is.
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError:
        if not readonly:
            raise
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    if readonly:
        conn.execute("PRAGMA query_only=1")
    return conn


def migrate(conn: sqlite3.Connection) -> None:
    """Bring a writable database to this schema: the tables (CREATE IF NOT EXISTS), then,
    for a database written before the per-run summaries (PRAGMA user_version 0), fill them
    from its rows, once, in one transaction (~1 s per million rows)."""
    conn.executescript(SCHEMA)
    add_columns(conn)
    if conn.execute("PRAGMA user_version").fetchone()[0] >= summary.VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        summary.backfill(conn)
        conn.execute(f"PRAGMA user_version = {summary.VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def add_columns(conn: sqlite3.Connection) -> None:
    """Give a database from before ADDED_COLUMNS the ones it lacks (a no-op on a new one)."""
    for table, column, declaration in ADDED_COLUMNS:
        if column not in has_columns(conn, table):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def has_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The table's columns (a read-only database from before ADDED_COLUMNS lacks those)."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def summarised(conn: sqlite3.Connection) -> bool:
    """Whether the summaries hold (a read-only database from before them has none)."""
    return conn.execute("PRAGMA user_version").fetchone()[0] >= summary.VERSION
