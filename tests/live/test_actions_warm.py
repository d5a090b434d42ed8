"""A run that arrives over /ws/ingest has its action segments caught up once it stops
(app/live/actions_warm.py): its first whole-run question no longer pays the catch-up."""

from __future__ import annotations

import asyncio

from fastapi.testclient import TestClient
from support import TOKEN, ingest_steps, run_info, wait_until

from app.live.actions_segments import Segments
from app.live.actions_warm import Warmer
from app.main import create_app
from app.settings import Settings


def test_a_run_that_finishes_over_ingest_has_its_segments_before_anyone_asks(tmp_path):
    app = create_app(Settings(db=tmp_path / "w.sqlite3", ingest_token=TOKEN))
    info = run_info("warm", dp=2, tp=1, pp=2, steps=3)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        segments = app.state.live.actions
        ingest_steps(client, info)
        assert wait_until(lambda: segments.files("warm"), timeout_s=20), "never warmed"
        ids = [int(p.stem.split("-")[1]) for p in segments.files("warm")]
        stored = app.state.live.store.conn.execute(
            "SELECT MAX(id) FROM steps WHERE run = 'warm'"
        ).fetchone()[0]
        assert max(ids) == stored  # every stored row, not a part
        table = client.get("/api/runs/warm/actions").json()
        assert len(table["ranks"]) == info.world_size


def test_only_a_stopped_run_is_warmed_and_once_while_queued(tmp_path):
    warmed: list[str] = []

    class Counting(Segments):
        def warm(self, run: str) -> None:
            warmed.append(run)

    async def go() -> None:
        warmer = Warmer(Counting(tmp_path / "x.sqlite3"))
        task = asyncio.create_task(warmer.run())
        for run, status in [("a", "running"), ("a", "stale"), ("b", "done"), ("b", "done"),
                            ("c", "failed"), ("d", "incomplete")]:  # fmt: skip
            warmer.stopped(run, status)
        for _ in range(50):
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(go())
    assert warmed == ["b", "c", "d"]


def test_a_catch_up_stops_at_its_next_chunk_once_the_server_closes(tmp_path):
    """Shutdown waits for no whole-run catch-up: at most the chunk being written."""
    from actions_support import store_steps

    from app.live.store import Store

    store = Store(tmp_path / "s.sqlite3")
    store_steps(store, run_info("big", dp=2, tp=1, pp=2, steps=4), range(4))
    store.close()
    segments = Segments(tmp_path / "s.sqlite3", chunk=4)  # 16 rows: four chunks
    segments.close()
    with segments.lock("big"):
        written = segments.catch_up("big")
    assert len(written) == 1
    whole = Segments(tmp_path / "s.sqlite3", tmp_path / "whole", chunk=4)
    with whole.lock("big"):
        assert len(whole.catch_up("big")) > 1  # the same rows, left to run: every chunk
