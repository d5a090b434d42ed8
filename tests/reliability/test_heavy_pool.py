"""Issue 26 item 2: heavy work must not hold the server's GIL. Past the light bound, a route's
pure work runs in one of the app's worker processes (app/api/pool.py), so the event loop that
answers /healthz never waits on it. Each answer made there is byte for byte the one the
server's threads make (an app with ``heavy_processes=0``); a refusal is still a 422 made
before any worker is asked; a job past its bound, or a stream nobody reads any more, leaves
no child computing. (The latency and RSS figures are bench/bench_heavy.py's.)"""

import os
import time
import warnings
from urllib.parse import quote

import pytest
from support import TOKEN, ingest_steps, run_info

from app.api import pool_jobs
from app.api.pool import JobTimeout, WorkerPool
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario, ScenarioError
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(120)
# pp*microbatches*chunks = 2,048: exactly the light bound (1/64 of the biggest), so heavy,
# and quick to evaluate.
HEAVY = "pp=8&microbatches=256&f_time=1&b_time=1"
OTHER = "pp=8&microbatches=256&f_time=1&b_time=2"
COMPARE = f"/api/compare?s={quote(HEAVY)}&s={quote(OTHER)}"
# A run whose analysis is over the light bound: 4 ranks' records at 2,048 events each.
INFO = run_info("pooled", pp=4, steps=2, m=256)
ROUTES = [
    f"/api/scenario?{HEAVY}",
    COMPARE,
    f"/api/trace?{HEAVY}",
    f"/api/flow?{HEAVY}",
    f"/api/orders?{HEAVY}",
    f"/flow?{HEAVY}",  # the page's embedded view model, evaluated in a worker
    f"/?{HEAVY}",  # the overview page's, a miss of the app's cache
    "/api/plan?model=llama3-8b&gpus=8&global_batch=16",
    "/plan?model=llama3-8b&gpus=8&global_batch=16",  # the page renders /api/plan's JSON
]


@pytest.fixture
def make(tmp_path, fidelity_board):
    clients = []

    def make(processes: int) -> TestClient:
        db = tmp_path / f"m{processes}.sqlite3"
        settings = Settings(db=db, ingest_token=TOKEN, heavy_processes=processes)
        app = create_app(settings)
        app.state.fidelity = fidelity_board
        client = TestClient(app).__enter__()
        clients.append(client)
        ingest_steps(client, INFO)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.mark.parametrize("route", ROUTES)
def test_a_heavy_answer_is_made_in_a_worker_process_and_is_the_same_bytes(make, route):
    pooled, threaded = make(1), make(0)
    pool = pooled.app.state.pool
    assert isinstance(pool, WorkerPool) and threaded.app.state.pool is None
    got, want = pooled.get(route), threaded.get(route)
    assert got.status_code == want.status_code
    assert got.status_code == 200 or "plan?" in route  # the planner's own 422s
    assert got.content == want.content
    assert got.headers["content-type"] == want.headers["content-type"]
    # The work went to a worker, another process than the server's, and the worker is free.
    assert pool.jobs >= 1 and pool.busy == 0
    assert pool.pids and os.getpid() not in pool.pids
    assert pooled.app.state.heavy.running == 0


def test_a_heavy_analysis_is_made_in_a_worker_process_and_is_the_same_bytes(make):
    # One app (each ingest stores its own clock's times): its answer with the pool, then,
    # the cache emptied, without it.
    client = make(1)
    pool, url = client.app.state.pool, f"/api/runs/{INFO.run}/analysis"
    pooled = client.get(url)
    assert pooled.status_code == 200 and pool.jobs == 1 and pool.busy == 0
    client.app.state.pool = None
    client.app.state.live.analyses.clear()
    threaded = client.get(url)
    client.app.state.pool = pool  # closed with the app
    assert threaded.status_code == 200 and threaded.content == pooled.content
    assert pool.jobs == 1


def test_the_compare_page_embeds_the_same_comparison_made_in_a_worker(make):
    pooled, threaded = make(1), make(0)
    page = COMPARE.replace("/api/compare", "/compare")
    got, want = pooled.get(page), threaded.get(page)
    assert got.status_code == want.status_code == 200
    assert got.text == want.text and pooled.app.state.pool.jobs == 1


def test_the_compare_lines_come_from_a_worker_and_match(make):
    pooled, threaded = make(1), make(0)
    ask = {"Accept": "application/x-ndjson", "Accept-Encoding": "identity"}
    got, want = pooled.get(COMPARE, headers=ask), threaded.get(COMPARE, headers=ask)
    assert got.status_code == want.status_code == 200
    assert got.content == want.content and got.content.count(b"\n") == 4  # head, 2, tail
    assert pooled.app.state.pool.jobs == 1


@pytest.mark.parametrize(
    "route",
    [
        f"/api/scenario?{HEAVY}&hardware=no-such-gpu",
        f"/api/compare?s={quote(HEAVY + '&hardware=no-such-gpu')}&s={quote(OTHER)}",
        f"/api/trace?{HEAVY}&hardware=no-such-gpu",
    ],
)
def test_an_error_raised_in_the_worker_is_the_same_422(make, route):
    pooled, threaded = make(1), make(0)
    got, want = pooled.get(route), threaded.get(route)
    assert got.status_code == want.status_code == 422
    assert got.json() == want.json()
    assert pooled.app.state.pool.busy == 0 and pooled.app.state.heavy.running == 0


def test_bad_input_is_a_422_before_any_worker_is_asked(make):
    pooled = make(1)
    bad = HEAVY.replace("pp=8", "pp=0")
    for route in (f"/api/scenario?{bad}", f"/api/trace?{bad}", f"/api/compare?s={quote(bad)}"):
        assert pooled.get(route).status_code == 422
    assert pooled.app.state.pool.jobs == 0


def test_a_light_request_stays_on_the_threads(make):
    pooled = make(1)
    assert pooled.get("/api/scenario?pp=2&microbatches=4").status_code == 200
    assert pooled.app.state.pool.jobs == 0


def _gone(pid: int) -> bool:
    """Whether the worker ``pid`` has exited (waits for it at most 10 s, a bound, not a
    measure: a killed child is reaped in milliseconds)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_an_abandoned_stream_kills_its_worker_and_a_fresh_one_serves_next():
    pool = WorkerPool(1, timeout_s=60, recycle_bytes=2**30)
    big = Scenario(pp=8, microbatches=256)
    try:
        job = pool.submit(pool_jobs.trace_chunks, big, {})
        with pytest.raises(ScenarioError):  # an empty registry: the job's own error comes back
            job.value()
        pieces = pool.submit(pool_jobs.trace_chunks, big, dict(HARDWARE)).first()
        assert next(pieces).startswith(b'{"traceEvents":[')
        (pid,) = pool.pids
        pieces.abort()  # the client went: nobody reads the rest
        assert _gone(pid) and pool.killed == 1 and pool.busy == 0
        assert pool.call(os.getpid) not in (pid, os.getpid())  # a fresh worker
    finally:
        pool.close()


def test_a_job_past_its_bound_is_killed_not_left_running():
    pool = WorkerPool(1, timeout_s=0.5, recycle_bytes=2**30)
    try:
        assert pool.call(os.getpid) != os.getpid()
        (pid,) = pool.pids
        with pytest.raises(JobTimeout):
            pool.call(time.sleep, 60)
        assert _gone(pid) and pool.killed == 1 and pool.busy == 0
        assert pool.call(sum, [1, 2]) == 3  # and the pool goes on
    finally:
        pool.close()
    assert not pool.pids


def test_closing_the_app_ends_its_workers(tmp_path, fidelity_board):
    settings = Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN, heavy_processes=2)
    app = create_app(settings)
    app.state.fidelity = fidelity_board
    with TestClient(app) as client:
        assert client.get(f"/api/scenario?{HEAVY}").status_code == 200
        pids = app.state.pool.pids
        assert pids
    assert all(_gone(pid) for pid in pids)
