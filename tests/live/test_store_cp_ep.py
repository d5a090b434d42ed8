"""The store keeps each step's cp and ep seconds (issue 25): new columns that a database from
before them gains at the writer's start, while a 3D run is stored byte for byte as before."""

from __future__ import annotations

import json
import sqlite3

import pytest
from cp_ep_support import cp_ep_info, cp_ep_records
from support import records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.live.store import Store
from app.live.store_read import Reader

OLD_STEPS = """CREATE TABLE steps (
  id INTEGER PRIMARY KEY, run TEXT NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL,
  attempt INTEGER NOT NULL, superseded INTEGER NOT NULL DEFAULT 0, t0 REAL NOT NULL,
  step_time_s REAL NOT NULL, compute_s REAL NOT NULL, tp_s REAL NOT NULL, dp_s REAL NOT NULL,
  pp_wait_s REAL NOT NULL, host_s REAL NOT NULL, loss REAL, mem INTEGER,
  received REAL NOT NULL, record TEXT NOT NULL
)"""  # the steps table as the release before cp and ep left it


def _store_3d(store: Store, run: str, steps: range) -> list[ProbeRecord]:
    info = run_info(run, dp=2, tp=2, pp=2, steps=20)
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(info.world_size)])
    recs = [ProbeRecord.model_validate(r) for s in steps for r in records(info, s, t0=50.0)]
    store.transaction([("record", (r, 2.0)) for r in recs])
    return recs


def _columns(path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[1] for row in db.execute("PRAGMA table_info(steps)")]


def test_an_old_database_gains_the_cp_and_ep_columns_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(OLD_STEPS)
    Store(path).close()  # the old table exists: CREATE IF NOT EXISTS leaves it as it was
    with sqlite3.connect(path) as db:  # back to the old layout, the rows of a 3D run in it
        db.execute("ALTER TABLE steps DROP COLUMN cp_s")
        db.execute("ALTER TABLE steps DROP COLUMN ep_s")
    assert "cp_s" not in _columns(path)
    store = Store(path)  # the writer migrates at start
    assert _columns(path)[-2:] == ["cp_s", "ep_s"]
    _store_3d(store, "plain", range(2))
    info = cp_ep_info("cp-run")
    store.transaction([("hello", (info, r, 0, 1.0)) for r in range(info.world_size)])
    store.transaction([("record", (r, 2.0)) for r in cp_ep_records(info, 0)])
    store.close()
    with sqlite3.connect(path) as db:
        plain = db.execute("SELECT DISTINCT cp_s, ep_s FROM steps WHERE run = 'plain'").fetchall()
        cp = db.execute("SELECT cp_s, ep_s, step_time_s FROM steps WHERE run = 'cp-run'").fetchall()
    assert plain == [(0.0, 0.0)]
    assert len(cp) == info.world_size == 4  # dp*tp*pp*cp; ep folds inside
    for cp_s, ep_s, step_s in cp:  # two microbatches: 2 ms of cp in each F, 3 ms of ep in B
        assert (cp_s, ep_s, step_s) == pytest.approx((0.004, 0.006, 0.063))
    Store(path).close()  # a second start adds nothing


def test_a_read_only_old_database_still_reads(tmp_path):
    path = tmp_path / "ro.sqlite3"
    store = Store(path)
    _store_3d(store, "plain", range(2))
    store.conn.execute("ALTER TABLE steps DROP COLUMN cp_s")
    store.conn.execute("ALTER TABLE steps DROP COLUMN ep_s")
    store.close()
    reader = Reader(path)
    assert [row["run"] for row in reader.runs()] == ["plain"]
    assert len(reader.window("plain", 0, 1)) == 16  # two steps of 8 ranks
    reader.close()


def test_a_probe_shaped_run_without_cp_or_ep_is_stored_as_before(tmp_path):
    """Byte for byte: the stored record is the frame's record with no cp/ep in its coord,
    and the run's info has no cp or ep key (what a server from before them stored)."""
    path = tmp_path / "same.sqlite3"
    store = Store(path)
    recs = _store_3d(store, "plain", range(1))
    store.close()
    with sqlite3.connect(path) as db:
        (info,) = db.execute("SELECT info FROM runs").fetchone()
        stored = [row[0] for row in db.execute("SELECT record FROM steps ORDER BY rank")]
    assert "cp" not in json.loads(info) and "ep" not in json.loads(info)
    assert stored == [r.model_dump_json(exclude_none=True) for r in recs]
    for text in stored:
        assert set(json.loads(text)["coord"]) == {"dp", "pp", "tp"}
        assert '"cp"' not in text and '"ep"' not in text
