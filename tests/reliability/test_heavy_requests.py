"""Issue 13 item 6: one anonymous request must not take the server. Heavy routes take a slot
(429 with Retry-After when none comes), the flow page does not embed a huge view model, and
the planner refuses a search it cannot bound (422 on gpus). The speed side (healthz p99,
RSS under four heavy requests) is bench/bench_heavy.py's, not a test's."""

import warnings
from pathlib import Path

import pytest
from page_html import page_data

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(120)
TRACE = "/api/trace?pp=4&microbatches=4&f_time=1"
HEAVY = [TRACE, "/api/flow?pp=4&f_time=1", "/api/plan?model=llama3-8b&gpus=8&global_batch=16",
         "/plan?gpus=8", "/flow?pp=4&f_time=1"]  # fmt: skip
# The biggest flow the Scenario allows: 32 x 4096 x 3 actions (MAX_SIMULATED_ACTIONS).
HUGE = "schedule=zb-h1&pp=32&microbatches=4096&f_time=1&b_time=1&w_time=0.5"


@pytest.fixture
def make_client(tmp_path, fidelity_board):
    opened = []

    def make(**overrides):
        settings = Settings(db=tmp_path / "m.sqlite3", ingest_token="t" * 32, **overrides)
        app = create_app(settings)
        app.state.fidelity = fidelity_board
        client = TestClient(app).__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


@pytest.mark.parametrize("path", HEAVY)
def test_a_full_limiter_answers_429_with_retry_after_then_serves_once_freed(make_client, path):
    client = make_client(heavy_slots=1, heavy_queue=0, heavy_wait_s=3)
    limiter = client.app.state.heavy
    token = client.portal.call(limiter.acquire)  # held, as a long heavy request would
    try:
        busy = client.get(path)
        assert busy.status_code == 429
        assert int(busy.headers["retry-after"]) == 3
        assert client.get("/healthz").status_code == 200  # light routes are not limited
    finally:
        client.portal.call(limiter.release, token)
    assert client.get(path).status_code == 200
    assert limiter.running == 0  # every request, streamed ones too, gave its slot back


def test_a_queued_request_waits_its_bound_then_gets_429(make_client):
    client = make_client(heavy_slots=1, heavy_queue=4, heavy_wait_s=0.2)
    limiter = client.app.state.heavy
    token = client.portal.call(limiter.acquire)
    try:
        assert client.get(TRACE).status_code == 429  # queued, never served in its 0.2 s
    finally:
        client.portal.call(limiter.release, token)
    assert limiter.refused == 1


def test_a_refused_or_failing_request_leaves_no_slot_taken(make_client):
    client = make_client(heavy_slots=1, heavy_queue=0)
    assert client.get("/api/trace?schedule=interleaved&pp=3").status_code == 422
    assert client.get("/api/flow?dp=0").status_code == 422
    assert client.app.state.heavy.running == 0
    assert client.get(TRACE).status_code == 200


def test_the_huge_flow_page_defers_its_data_and_the_apis_it_fetches_answer(make_client):
    client = make_client()
    page = client.get(f"/flow?{HUGE}")
    assert page.status_code == 200
    assert len(page.content) < 1_000_000  # was ~100 MB with the view model embedded
    data = page_data(page.text)
    assert data["model"] is None and data["errors"] == {}
    deferred = data["extra"]["deferred"]
    assert deferred["bytes"] > deferred["limit"] == client.app.state.settings.page_embed_bytes
    assert 'id="timeline"' in page.text and 'id="cursor"' in page.text  # the page's controls
    # What the page's script fetches instead (static/js/flow.js): the view model and its data.
    model = client.get(f"/api/scenario?{HUGE}").json()
    assert len(model["timeline"]["events"]) == 32 * 4096 * 3
    frames = client.get(f"/api/flow?{HUGE}").json()["frames"]
    assert len(frames["times"]) == len(frames["bubble_so_far"]) > 1


def test_under_the_bound_the_flow_page_embeds_what_the_apis_return(make_client):
    query = "pp=4&microbatches=8&f_time=1"
    small = page_data(make_client().get(f"/flow?{query}").text)
    bounded = make_client(page_embed_bytes=1_000)
    deferred = page_data(bounded.get(f"/flow?{query}").text)
    assert small["extra"] == bounded.get(f"/api/flow?{query}").json()
    assert small["model"] == bounded.get(f"/api/scenario?{query}").json()
    assert deferred["model"] is None and deferred["extra"]["deferred"]["limit"] == 1_000


@pytest.mark.parametrize("path", ["/api/plan", "/plan"])
def test_a_plan_search_beyond_the_bound_is_a_422_naming_gpus(make_client, path):
    client = make_client(plan_max_candidates=100)
    res = client.get(f"{path}?model=gpt3-175b&hardware=a100-80g&gpus=1024&global_batch=1536")
    assert res.status_code == 422
    if path == "/api/plan":
        detail = res.json()["detail"][0]
        assert detail["loc"][-1] == "gpus" and "100" in detail["msg"]
    else:
        assert page_data(res.text)["errors"]["gpus"]
    # The 15,120 GPUs: 9,264 candidates, over the default bound.
    wide = make_client().get("/api/plan?gpus=15120&global_batch=15120")
    assert wide.status_code == 422 and wide.json()["detail"][0]["loc"][-1] == "gpus"


@pytest.mark.browser
def test_a_deferred_flow_page_fetches_and_draws_every_event_in_chromium(tmp_path):
    pytest.importorskip("playwright")
    from tests.browser.conftest import ARGS, CHROMIUM, ServerThread, api, open_view

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    query = "pp=4&microbatches=8&f_time=1&p2p_time=0.2"
    settings = Settings(db=tmp_path / "m.sqlite3", ingest_token="t" * 32, page_embed_bytes=1_000)
    with ServerThread(create_app(settings)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            open_view(page, f"{url}/flow?{query}", "flow")  # ready only once it has drawn
            model = api(url, "/api/scenario", query)
            drawn = len(model["timeline"]["events"]) + len(model["timeline"]["tail"])
            assert page.locator("#timeline").get_attribute("data-events") == str(drawn)
            page.locator("#cursor").fill("6")
            assert int(page.locator("#timeline").get_attribute("data-sends-now")) > 0
            assert errors == []
        finally:
            browser.close()


def test_the_collector_stays_off_until_the_last_heavy_slot_is_given_back(make_client):
    # Two overlapping heavy requests: the first to end must not turn the cyclic collector
    # back on under the other's heap (each full collection held the GIL ~300 ms).
    import gc

    assert gc.isenabled()
    client = make_client(heavy_slots=2, heavy_queue=0, heavy_wait_s=3)
    limiter = client.app.state.heavy
    first = client.portal.call(limiter.acquire)
    second = client.portal.call(limiter.acquire)
    try:
        assert not gc.isenabled()
        client.portal.call(limiter.release, first)
        assert not gc.isenabled()  # the second request is still running
    finally:
        client.portal.call(limiter.release, second)
    assert gc.isenabled()
    assert client.get("/api/flow?pp=4&f_time=1").status_code == 200
    assert gc.isenabled() and limiter.gc.holders == 0  # a streamed answer gave it back too
