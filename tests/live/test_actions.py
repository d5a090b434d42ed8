"""A run's per-action events in DuckDB (issue 25): Parquet segments derived from the SQLite
store, the current rows by the store's own rule, the whole-run phase table and stragglers,
and their routes."""

from __future__ import annotations

import logging
from pathlib import Path

import duckdb
import pytest
from actions_support import current_texts, phase_table_python, store_steps
from support import TOKEN, records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.core.layout.topology import Layout, parse_order
from app.core.traces.run_stragglers import find_run_stragglers
from app.live import actions_query
from app.live.actions_segments import Segments
from app.live.store import Store


@pytest.fixture
def store(tmp_path: Path):
    s = Store(tmp_path / "a.sqlite3")
    yield s
    s.close()


def _superseded_zero(store: Store, run: str) -> set[tuple[int, int, int]]:
    rows = store.conn.execute(
        "SELECT rank, step, attempt FROM steps WHERE run = ? AND superseded = 0", (run,)
    )
    return set(rows.fetchall())


def _table(segments: Segments, run: str, first: int, last: int) -> dict:
    ranks = segments.query(run, lambda c, f: actions_query.phase_table(c, f, first, last))
    return {(r["rank"], kind): v for r in ranks for kind, v in r["kinds"].items()}


def _assert_same(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for key, row in want.items():
        assert got[key]["steps"] == row["steps"], key
        assert got[key]["actions"] == row["actions"], key
        # DuckDB sums in parallel: the last bits depend on the order
        for name in ("total_s", "mean_s", "p50_s", "p95_s"):
            assert got[key][name] == pytest.approx(row[name], rel=1e-9, abs=1e-12), (key, name)


def _resumed(store: Store) -> str:
    """dp 2 x tp 2 x pp 2, steps 0-4 of attempt 0; attempt 1 from step 3 for every rank;
    then attempt 2 from step 4 for ranks 1 and 6 only, and a late record of the dead
    attempt 0 (rank 2, step 5) stored after both."""
    info = run_info("resumed", dp=2, tp=2, pp=2, steps=8)
    store_steps(store, info, range(5), slow_rank=5)
    store_steps(store, info, range(3, 7), attempt=1)
    ops: list[tuple[str, tuple]] = [("hello", (info, 1, 2, 1.0))]
    for step in range(4, 8):
        rows = records(info, step, attempt=2, t0=3000.0 + step)
        ops += [("record", (ProbeRecord.model_validate(rows[r]), 2.0)) for r in (1, 6)]
    store.transaction(ops)
    late = records(info, 5, attempt=0, t0=999.0)[2]
    store.transaction([("record", (ProbeRecord.model_validate(late), 2.0))])
    return info.run


def test_the_current_rows_are_sqlites_on_a_resumed_run(store, tmp_path):
    run = _resumed(store)
    segments = Segments(store.path, chunk=13)
    got = segments.query(run, actions_query.current_keys)
    want = _superseded_zero(store, run)
    assert got == want
    # the rule did leave rows out: the dead attempts' steps 3.. and ranks 1, 6's attempt 1
    assert (1, 5, 1) not in got and (1, 5, 2) in got and (0, 5, 1) in got and (2, 5, 0) not in got
    assert len(segments.files(run)) > 1  # several chunks: the rule spans segments


def test_the_phase_table_is_the_plain_python_one(store):
    run = _resumed(store)
    segments = Segments(store.path, chunk=10)
    for first, last in ((0, 7), (2, 4), (5, 5)):
        want = phase_table_python(current_texts(store.conn, run, first, last))
        _assert_same(_table(segments, run, first, last), want)


def test_catch_up_is_incremental(store):
    info = run_info("grow", dp=2, tp=1, pp=2, steps=10)
    store_steps(store, info, range(3))
    segments = Segments(store.path)
    before = _table(segments, info.run, 0, 9)
    old = {p.name: p.stat().st_mtime_ns for p in segments.files(info.run)}
    assert before[(0, "F")]["steps"] == 3
    store_steps(store, info, range(3, 5))
    after = _table(segments, info.run, 0, 9)
    assert after[(0, "F")]["steps"] == 5
    now = {p.name: p.stat().st_mtime_ns for p in segments.files(info.run)}
    assert {k: now[k] for k in old} == old  # the old segments untouched
    assert len(now) == len(old) + 1
    _assert_same(after, phase_table_python(current_texts(store.conn, info.run, 0, 9)))


def test_deleted_or_corrupt_segments_give_the_same_answer(store, caplog):
    run = _resumed(store)
    segments = Segments(store.path, chunk=9)
    want = _table(segments, run, 0, 7)
    files = segments.files(run)
    files[1].unlink()  # a middle one: the count against SQLite notices
    _assert_same(_table(segments, run, 0, 7), want)
    segments.files(run)[-1].write_bytes(b"PAR1 not a parquet file")  # cut short
    with caplog.at_level(logging.WARNING, "meshscope.live"):
        _assert_same(_table(segments, run, 0, 7), want)
    assert "rebuilt" in caplog.text
    for p in segments.files(run):
        p.unlink()
    _assert_same(_table(Segments(store.path), run, 0, 7), want)  # another server, none there


def test_a_read_only_database_keeps_its_segments_in_a_temporary_directory(store, caplog):
    run = _resumed(store)
    segments = Segments(store.path, readonly=True)
    with caplog.at_level(logging.WARNING, "meshscope.live"):
        keys = segments.query(run, actions_query.current_keys)
    assert keys == _superseded_zero(store, run)
    assert not (store.path.parent / "a.sqlite3.actions").exists()
    assert "read-only" in caplog.text
    temp = segments.root()
    segments.close()
    assert not temp.exists()


def test_an_unwritable_directory_falls_back(store, tmp_path, caplog):
    run = _resumed(store)
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory would go")
    segments = Segments(store.path, directory=blocked / "actions")
    with caplog.at_level(logging.WARNING, "meshscope.live"):
        assert segments.query(run, actions_query.current_keys) == _superseded_zero(store, run)
    assert "not writable" in caplog.text
    segments.close()


def test_whole_run_stragglers_name_the_slow_rank(store):
    info = run_info("slow", dp=4, tp=2, pp=2, steps=6)
    store_steps(store, info, range(6), slow_rank=5)
    segments = Segments(store.path)
    medians = segments.query(info.run, lambda c, f: actions_query.rank_medians(c, f, 0, 5))
    layout = Layout(info.dp, info.tp, info.pp, parse_order(info.order), info.gpus_per_node)
    found = find_run_stragglers(medians, layout)
    assert [(s.cause, s.phase, s.ranks) for s in found[:1]] == [("rank", "compute", (5,))]
    assert found[0].ratio == pytest.approx(1.5, rel=0.05)  # records() stretches it 1.5x


# --- routes ---------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    app = create_app(Settings(db=tmp_path / "c.sqlite3", ingest_token=TOKEN))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        store_steps(app.state.live.store, run_info("api", dp=4, tp=2, pp=2, steps=6),
                    range(6), slow_rank=5)  # fmt: skip
        yield c


def test_the_routes_answer(client, tmp_path):
    table = client.get("/api/runs/api/actions?first=1&last=4")
    assert table.status_code == 200, table.text
    body = table.json()
    assert (body["first"], body["last"], len(body["ranks"])) == (1, 4, 16)
    assert body["ranks"][5]["kinds"]["F"]["steps"] == 4
    assert client.get("/api/runs/api/actions").json()["last"] == 5
    slow = client.get("/api/runs/api/stragglers/run").json()
    assert slow["scope"] == "run" and slow["stragglers"][0]["ranks"] == [5]
    assert slow["stragglers"][0]["stage"] == 0
    got = client.get("/api/runs/api/actions.parquet?first=2&last=3")
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/vnd.apache.parquet"
    path = tmp_path / "got.parquet"
    path.write_bytes(got.content)
    store = client.app.state.live.store
    events = sum(len(ProbeRecord.model_validate_json(t).events)
                 for t in current_texts(store.conn, "api", 2, 3))  # fmt: skip
    con = duckdb.connect()
    assert con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()[0] == events
    steps = con.execute("SELECT DISTINCT step FROM read_parquet(?) ORDER BY 1", [str(path)])
    assert steps.fetchall() == [(2,), (3,)]


@pytest.mark.parametrize(
    ("query", "field"),
    [("first=4&last=2", "first"), ("first=-1", "first"), ("last=-3", "last"),
     ("last=6", "last"), ("first=x", "first"), ("last=10000001", "last")],
)  # fmt: skip
@pytest.mark.parametrize("path", ["actions", "stragglers/run", "actions.parquet"])
def test_bad_parameters_are_refused_naming_the_field(client, path, query, field):
    r = client.get(f"/api/runs/api/{path}?{query}")
    assert r.status_code == 422, r.text
    assert [d["loc"] for d in r.json()["detail"]] == [["query", field]]


@pytest.mark.parametrize("path", ["actions", "stragglers/run", "actions.parquet"])
def test_an_unknown_run_is_404(client, path):
    assert client.get(f"/api/runs/nope/{path}").status_code == 404


def test_the_read_token_is_required(tmp_path):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    app = create_app(Settings(db=tmp_path / "t.sqlite3", read_token="r" * 20))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for path in ("actions", "stragglers/run", "actions.parquet"):
            assert c.get(f"/api/runs/x/{path}").status_code == 401
            auth = {"Authorization": "Bearer " + "r" * 20}
            assert c.get(f"/api/runs/x/{path}", headers=auth).status_code == 404


def test_a_record_without_events_still_starts_its_attempt(store):
    """Rank 0's attempt 1 begins with an empty record at step 1: its rows of attempt 0 from
    step 1 on are dead, though the segments hold no action of that record."""
    info = run_info("empty", dp=1, tp=1, pp=2, steps=4)
    store_steps(store, info, range(4))
    empty = records(info, 1, attempt=1)[0] | {"events": []}
    store.transaction([("hello", (info, 0, 1, 1.0)),
                       ("record", (ProbeRecord.model_validate(empty), 2.0))])  # fmt: skip
    segments = Segments(store.path)
    got = segments.query(info.run, actions_query.current_keys)
    assert got == _superseded_zero(store, info.run)
    assert (0, 2, 0) not in got and (0, 1, 1) in got
    table = _table(segments, info.run, 0, 3)
    assert table[(0, "F")]["steps"] == 1  # step 0 only: step 1's record has none


def test_the_rank_medians_are_the_window_analysis_phase_times(store):
    """Each rank's medians over the run equal the medians of the window analysis's own
    per-step phase times (app/core/traces/stragglers.py) over the same current records."""
    from statistics import median

    from app.core.inputs.protocol_fast import parse_stored_record
    from app.core.traces.stragglers import _phase_times

    run = _resumed(store)
    got = Segments(store.path, chunk=11).query(
        run, lambda c, f: actions_query.rank_medians(c, f, 0, 7)
    )
    times = _phase_times(parse_stored_record(t) for t in current_texts(store.conn, run, 0, 7))
    for rank, medians in got.items():
        per_step = [t for (_, r), t in sorted(times.items()) if r == rank]
        for phase in ("compute", "tp", "dp", "pp_wait", "step"):
            want = median(t.get(phase, 0.0) for t in per_step)
            assert medians[phase] == pytest.approx(want, abs=1e-12), (rank, phase)
    assert len(got) == 8


def test_small_segments_of_a_live_run_are_merged(store):
    """A query after every step leaves a segment a step; the small ones at the end are
    merged when there are merge_at of them, and a merge cut short before its parts were
    removed reads each action once."""
    info = run_info("live", dp=2, tp=1, pp=2, steps=12)
    segments = Segments(store.path, merge_at=4)
    for step in range(10):
        store_steps(store, info, range(step, step + 1))
        _table(segments, info.run, 0, 11)
    files = segments.files(info.run)
    assert len(files) < 4  # 10 written, merged at 4 and 7, and 10
    want = phase_table_python(current_texts(store.conn, info.run, 0, 11))
    _assert_same(_table(segments, info.run, 0, 11), want)
    merged = files[0]
    first, last = (int(x) for x in merged.stem.split("-"))
    part = merged.with_name(f"{first}-{first + 1}.parquet")  # as if left by a killed merge
    part.write_bytes(merged.read_bytes())
    _assert_same(_table(Segments(store.path), info.run, 0, 11), want)
    assert not part.exists()


def test_a_parquet_file_is_removed_when_its_client_goes_away_mid_file(tmp_path):
    """A background task runs only after the last byte: a client that left mid-file used to
    leave the temporary file behind, one per abandoned download."""
    import asyncio

    from app.api.run_actions import TemporaryFileResponse

    path = tmp_path / "t.parquet"
    path.write_bytes(b"x" * (1 << 20))
    scope = {"type": "http", "method": "GET", "headers": [], "asgi": {"spec_version": "2.4"}}

    async def gone(message):
        if message["type"] == "http.response.body":
            raise OSError("client went away")

    async def receive():
        return {"type": "http.disconnect"}

    with pytest.raises(OSError):
        asyncio.run(TemporaryFileResponse(path)(scope, receive, gone))
    assert not path.exists()
