"""Issue 26 item 2: heavy work outside the limiter. /api/compare, /compare, /api/scenario on a
cache miss and /api/runs/{run}/steps go through admission with a cost estimate (a light one
needs no slot; a cached scenario neither), and every request body has a cap (413 before it is
buffered). The speed side (healthz p99, RSS under 4 of them) is bench/bench_heavy.py's."""

import warnings
from urllib.parse import quote

import pytest
from support import TOKEN, ingest_steps, run_info

from app.api import costs
from app.core.inputs.protocol import MAX_EVENTS, MAX_STEP_EVENTS
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(120)
# pp*microbatches = 4,096 chunk-microbatches: 1/32 of the biggest scenario, over the light
# bound (1/64); a compare of two is 1/16.
BIG = "pp=8&microbatches=512&f_time=1&b_time=1"
SMALL = "pp=2&microbatches=4&f_time=1"
INFO = run_info("paged", pp=2, steps=3)


@pytest.fixture
def client(tmp_path):
    settings = Settings(
        db=tmp_path / "m.sqlite3", ingest_token=TOKEN, heavy_slots=1, heavy_queue=0,
        heavy_wait_s=1, max_body_bytes=64 * 1024,
    )  # fmt: skip
    with TestClient(create_app(settings)) as client:
        yield client


class _Held:
    """Every heavy slot taken, as by long heavy requests."""

    def __init__(self, client: TestClient) -> None:
        self.client, self.limiter = client, client.app.state.heavy

    def __enter__(self):
        self.token = self.client.portal.call(self.limiter.acquire)
        return self

    def __exit__(self, *exc) -> None:
        self.client.portal.call(self.limiter.release, self.token)


@pytest.mark.parametrize("route", ["/api/compare", "/compare"])
def test_a_compare_waits_for_a_slot_or_gets_429(client, route):
    path = f"{route}?s={quote(SMALL)}&s={quote(BIG)}"
    with _Held(client):
        busy = client.get(path)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
        bad = client.get(f"{route}?s={quote(SMALL)}&s={quote(BIG.replace('pp=8', 'pp=0'))}")
        assert bad.status_code == 422  # refused before admission: no slot needed
    assert client.get(path).status_code == 200
    assert client.app.state.heavy.running == 0


def test_a_scenario_miss_is_admitted_a_hit_or_a_light_one_is_not(client):
    with _Held(client):
        assert client.get(f"/api/scenario?{BIG}").status_code == 429  # a miss: computed
        assert client.get(f"/api/scenario?{SMALL}").status_code == 200  # light: no slot
    first = client.get(f"/api/scenario?{BIG}")
    assert first.status_code == 200
    with _Held(client):
        again = client.get(f"/api/scenario?{BIG}")  # kept: answered from the cache
        assert again.status_code == 200 and again.content == first.content


def test_a_page_of_steps_is_admitted_and_bounded_in_events(client):
    ingest_steps(client, INFO)
    url = "/api/runs/paged/steps?since=-1"
    with _Held(client):
        busy = client.get(url)
        assert busy.status_code == 429
    page = client.get(url).json()
    assert len(page["records"]) == INFO.world_size * INFO.steps and page["next_since"] is None
    # The page's limit is lowered to what a bounded number of events allows.
    one_rank = run_info("wide", pp=1, steps=100)
    assert one_rank.events_cap() == MAX_EVENTS
    assert costs.steps_limit(one_rank, 20_000) * MAX_EVENTS <= 4 * MAX_STEP_EVENTS
    assert costs.steps(one_rank, costs.steps_limit(one_rank, 20_000)) <= 1.0


def test_every_body_has_a_cap(client):
    url = "/api/hardware/validate"
    declared = client.post(url, content=b"{" + b" " * 100_000 + b"}",
                           headers={"content-type": "application/json"})  # fmt: skip
    assert declared.status_code == 413 and "65536" in declared.json()["detail"]

    def chunked():  # no Content-Length: counted as it arrives
        for _ in range(100):
            yield b" " * 4096

    streamed = client.post(url, content=chunked(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    small = client.post(url, json={"name": "x"})  # under the cap: validated as before
    assert small.status_code == 422


@pytest.mark.parametrize("route", ["/", "/api/orders"])
def test_routes_that_evaluate_a_scenario_not_yet_kept_are_admitted(client, route):
    with _Held(client):
        assert client.get(f"{route}?{BIG}").status_code == 429
        assert client.get(f"{route}?{SMALL}").status_code == 200  # light: no slot
    assert client.get(f"{route}?{BIG}").status_code == 200
    with _Held(client):
        assert client.get(f"{route}?{BIG}").status_code == 200  # kept now: no slot
