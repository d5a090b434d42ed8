"""Whole-run actions of a run with context (cp) and expert (ep) parallelism (issue 25): the
segments and the Parquet export carry each action's cp and ep coordinates (0 in a 3D run),
the whole-run stragglers find a slow CP group as the window analysis does, and a segment an
older server wrote (no cp/ep columns, no layout in its footer) is rebuilt, not misread."""

from __future__ import annotations

import logging
from pathlib import Path
from statistics import median

import duckdb
import pytest
from actions_support import current_texts, store_steps
from cp_ep_support import cp_ep_info, slow_cp_records
from support import TOKEN, run_info

from app.core.inputs.protocol import RunInfo, run_layout
from app.core.inputs.protocol_fast import parse_stored_record
from app.core.traces.run_stragglers import find_run_stragglers
from app.core.traces.stragglers import _phase_times, find_stragglers
from app.live import actions_query
from app.live.actions_compact import LAYOUT
from app.live.actions_segments import Segments
from app.live.store import Store

STEPS = 4


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "a.sqlite3")
    yield s
    s.close()


def store_cp_ep(store: Store, info: RunInfo, slow: set[int] = frozenset()) -> None:
    ops: list[tuple[str, tuple]] = [("hello", (info, 0, 0, 1.0))]
    for step in range(STEPS):
        ops += [("record", (r, 1.0)) for r in slow_cp_records(info, step, slow)]
    store.transaction(ops)


def _export(segments: Segments, run: str, out: Path) -> list[tuple]:
    segments.query(run, lambda c, f: actions_query.export(c, f, 0, STEPS - 1, out))
    sql = "SELECT DISTINCT rank, dp, pp, tp, cp, ep FROM read_parquet(?) ORDER BY rank"
    return duckdb.connect().execute(sql, [str(out)]).fetchall()


def _coords(info: RunInfo) -> list[tuple]:
    layout = run_layout(info)
    cs = [(r, layout.coord(r)) for r in range(layout.world_size)]
    return [(r, c.dp, c.pp, c.tp, c.cp, c.ep) for r, c in cs]


def test_a_cp_ep_runs_parquet_carries_each_ranks_cp_and_ep(store, tmp_path):
    info = cp_ep_info("cpep", dp=2, tp=1, pp=2, cp=2, ep=2)
    store_cp_ep(store, info)
    got = _export(Segments(store.path), info.run, tmp_path / "x.parquet")
    assert got == _coords(info)  # layout.topology's coordinates, each rank's
    assert {row[4] for row in got} == {0, 1} and {row[5] for row in got} == {0, 1}


def test_a_3d_runs_parquet_has_the_columns_at_zero(store, tmp_path):
    info = run_info("plain", dp=2, tp=2, pp=2, steps=STEPS)
    store_steps(store, info, range(STEPS))
    got = _export(Segments(store.path), info.run, tmp_path / "x.parquet")
    assert got == _coords(info) and {(row[4], row[5]) for row in got} == {(0, 0)}


def test_whole_run_stragglers_name_a_slow_cp_group_as_the_window_does(store):
    info = cp_ep_info("slowcp", dp=2, tp=1, pp=2, cp=2, ep=2)
    layout = run_layout(info)
    slow = set(layout.group("cp", 0))
    store_cp_ep(store, info, slow)
    medians = Segments(store.path).query(
        info.run, lambda c, f: actions_query.rank_medians(c, f, 0, STEPS - 1)
    )
    (found,) = find_run_stragglers(medians, layout)
    assert (found.cause, found.phase, found.ranks) == ("link", "cp", tuple(sorted(slow)))
    records = [r for step in range(STEPS) for r in slow_cp_records(info, step, slow)]
    (window,) = find_stragglers(records, layout)
    assert (window.cause, window.phase, window.ranks) == (found.cause, found.phase, found.ranks)
    assert found.excess_s == pytest.approx(window.excess_s)


def test_the_rank_medians_of_a_cp_ep_run_are_the_window_phase_times(store):
    info = cp_ep_info("med", dp=2, tp=1, pp=2, cp=2, ep=2)
    store_cp_ep(store, info, {1})
    got = Segments(store.path, chunk=5).query(
        info.run, lambda c, f: actions_query.rank_medians(c, f, 0, STEPS - 1)
    )
    texts = current_texts(store.conn, info.run, 0, STEPS - 1)
    times = _phase_times(parse_stored_record(t) for t in texts)
    for rank, medians in got.items():
        per_step = [t for (_, r), t in sorted(times.items()) if r == rank]
        for phase in ("compute", "tp", "dp", "pp_wait", "cp", "ep", "step"):
            want = median(t.get(phase, 0.0) for t in per_step)
            assert medians[phase] == pytest.approx(want, abs=1e-12), (rank, phase)
    assert got[1]["cp"] == pytest.approx(2 * 0.010) and got[0]["cp"] == pytest.approx(2 * 0.002)
    assert got[0]["ep"] == pytest.approx(2 * 0.003)


def _as_older_server(path: Path) -> None:
    """Rewrite a segment as a server before layout 2 wrote it: no cp or ep column, and no
    layout in its footer."""
    tmp = path.with_name(".tmp-old.parquet")
    con = duckdb.connect()
    src = str(path).replace("'", "''")
    con.execute(f"COPY (SELECT * EXCLUDE (cp, ep) FROM read_parquet('{src}')) TO '{tmp}'")
    con.close()
    tmp.replace(path)


def _layouts(files: list[Path]) -> list[str]:
    sql = """SELECT decode(value) FROM parquet_kv_metadata(?)
             WHERE decode(key) = 'meshscope_layout' ORDER BY file_name"""
    return [v for (v,) in duckdb.connect().execute(sql, [[str(f) for f in files]]).fetchall()]


def test_a_segment_of_the_older_layout_is_rebuilt(store, tmp_path, caplog):
    info = cp_ep_info("old", dp=2, tp=1, pp=2, cp=2, ep=2)
    store_cp_ep(store, info)
    segments = Segments(store.path, chunk=7)
    segments.query(info.run, lambda c, f: None)
    files = segments.files(info.run)
    assert len(files) > 2 and _layouts(files) == [LAYOUT] * len(files)
    _as_older_server(files[1])  # one older segment among new ones
    restarted = Segments(store.path, chunk=7)  # a newer server over the same directory
    with caplog.at_level(logging.WARNING, "meshscope.live"):
        got = _export(restarted, info.run, tmp_path / "x.parquet")
    assert "another layout" in caplog.text
    assert got == _coords(info)
    now = restarted.files(info.run)
    assert _layouts(now) == [LAYOUT] * len(now)


def test_the_phase_table_route_names_cp_and_ep_only_on_a_run_with_them(tmp_path):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    app = create_app(Settings(db=tmp_path / "c.sqlite3", ingest_token=TOKEN))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        store = app.state.live.store
        info = cp_ep_info("wide", dp=2, tp=1, pp=2, cp=2, ep=2)
        store_cp_ep(store, info)
        store_steps(store, run_info("flat", dp=2, tp=2, pp=2, steps=STEPS), range(STEPS))
        wide = c.get("/api/runs/wide/actions").json()["ranks"]
        assert [(r["rank"], r["dp"], r["pp"], r["tp"], r["cp"], r["ep"]) for r in wide] == (
            _coords(info)
        )
        flat = c.get("/api/runs/flat/actions").json()["ranks"]
        assert set(flat[0]) == {"rank", "dp", "pp", "tp", "kinds"}
        slow = c.get("/api/runs/wide/stragglers/run").json()
        assert slow["ranks"] == 8 and slow["stragglers"] == []


def test_a_merged_segment_keeps_the_layout(store):
    """actions_compact's merge writes its segment with the layout too: else the next server
    would rebuild every merged run."""
    info = cp_ep_info("merged", dp=2, tp=1, pp=2, cp=2, ep=2)
    store_cp_ep(store, info)
    segments = Segments(store.path, chunk=7, merge_at=2)
    segments.query(info.run, lambda c, f: None)
    (merged,) = segments.files(info.run)
    assert _layouts([merged]) == [LAYOUT]


def test_the_straggler_routes_name_a_slow_cp_link(tmp_path):
    """Both answers word a CP group as a link of axis cp (app/api/run_stragglers.AXIS_OF had
    no cp: the finding was a 500)."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    app = create_app(Settings(db=tmp_path / "c.sqlite3", ingest_token=TOKEN))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        info = cp_ep_info("slow", dp=2, tp=1, pp=2, cp=2, ep=2)
        slow = run_layout(info).group("cp", 0)
        store_cp_ep(app.state.live.store, info, set(slow))
        for path in ("stragglers/run", f"stragglers?step={STEPS - 1}"):
            r = c.get(f"/api/runs/slow/{path}")
            assert r.status_code == 200, (path, r.text)
            (found,) = r.json()["stragglers"]
            assert (found["cause"], found["phase"], found["axis"]) == ("link", "cp", "cp")
            assert found["ranks"] == sorted(slow)
