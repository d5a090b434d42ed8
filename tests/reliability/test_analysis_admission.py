"""Issue 26 item 5: a run's analysis simulates its schedule, so one anonymous request for it
is a heavy request (app/api/limits.py): it waits for a slot or gets 429, and /healthz is
never behind it. It is cached per (run, step, window, rows read): asked again, it is served
from the cache without a slot and without computing it again."""

import time
import warnings

import pytest
from support import TOKEN, ingest_steps, run_info

from app.live import analysis
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(60)
INFO = run_info("admitted", pp=2, steps=3)
URL = "/api/runs/admitted/analysis"


def test_the_analysis_takes_a_heavy_slot_and_is_computed_once(tmp_path, monkeypatch):
    calls = []
    real = analysis.analyse
    monkeypatch.setattr(analysis, "analyse", lambda *a, **k: calls.append(1) or real(*a, **k))
    # heavy_processes=0: the analysis on the server's threads, where ``calls`` counts it (in
    # a worker process it is test_heavy_pool.py's).
    settings = Settings(
        db=tmp_path / "m.sqlite3", ingest_token=TOKEN, heavy_slots=1, heavy_queue=0,
        heavy_wait_s=1, heavy_processes=0,
    )  # fmt: skip
    with TestClient(create_app(settings)) as client:
        ingest_steps(client, INFO)
        limiter = client.app.state.heavy
        token = client.portal.call(limiter.acquire)  # a long heavy request holds the slot
        try:
            busy = client.get(URL)
            assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
            assert client.get("/healthz").status_code == 200
            assert calls == []
        finally:
            client.portal.call(limiter.release, token)
        first = client.get(URL)
        assert first.status_code == 200 and first.json()["step"] == INFO.steps - 1
        assert calls == [1] and limiter.running == 0
        token = client.portal.call(limiter.acquire)
        try:  # the same step again: from the cache, with every slot taken
            again = client.get(URL)
            assert again.status_code == 200 and again.content == first.content
        finally:
            client.portal.call(limiter.release, token)
        assert calls == [1]
        assert client.get(URL + "?step=0").status_code == 200  # another step: computed
        assert calls == [1, 1]


def test_a_run_stored_before_the_bounds_is_refused_not_replayed(tmp_path):
    # pp=8 with 200,000 microbatches: 19.8 s and 2.4 GB for one analysis before issue 26.
    huge = run_info("huge", pp=8, steps=3).model_copy(update={"microbatches": 200_000})
    settings = Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN)
    with TestClient(create_app(settings)) as client:
        live = client.app.state.live

        async def store_hello():  # as an older server stored it, before hellos were bounded
            return await live.writer.submit("hello", huge, 0, 0, time.time())

        client.portal.call(store_hello)
        t = time.monotonic()
        res = client.get("/api/runs/huge/analysis?step=0")
        assert res.status_code == 422 and "pp*microbatches*chunks*3" in res.json()["detail"]
        assert time.monotonic() - t < 2.0
        assert client.get("/api/runs/huge").status_code == 200  # the run itself still shows
