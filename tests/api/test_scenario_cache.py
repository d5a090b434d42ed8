"""The scenario cache: one evaluate per canonical query, bounded in bytes, single-flight, and
/api/scenario answered from it with an ETag; the pages embed the same cached numbers."""

import threading
import time
import warnings

import pytest
from page_html import page_data

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from fastapi.responses import JSONResponse

from app.api.scenario_cache import ByteLRU, ScenarioCache, canonical
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario, ScenarioError
from app.main import create_app
from app.settings import Settings


class Counting:
    """evaluate, counting its calls per canonical scenario."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, scenario: Scenario) -> dict:
        self.calls.append(canonical(scenario))
        return evaluate(scenario)


@pytest.fixture
def counted(client):
    """The client's app with a cache whose evaluate calls are counted."""
    run = Counting()
    client.app.state.scenario_cache = ScenarioCache(1 << 26, client.app.version, run)
    return run


def scenario(**query: str) -> Scenario:
    return Scenario.model_validate(query)


def wait_for(predicate, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.001)


# --- the key ---------------------------------------------------------------------------------


def test_reordered_and_defaulted_parameters_share_one_key():
    base = canonical(scenario(dp="2", tp="4"))
    assert canonical(scenario(tp="4", dp="2")) == base
    assert canonical(scenario(tp="4", dp="2", pp="2", schedule="1f1b", microbatches="4")) == base
    assert canonical(scenario(dp="2", tp="4", order="tp,pp,dp")) == base  # order normalised
    assert canonical(scenario(dp="2", tp="8")) != base


def test_shape_fields_without_a_model_share_the_key_of_model_custom():
    shaped = {"layers": "4", "hidden": "256", "heads": "4"}
    assert canonical(scenario(**shaped)) == canonical(scenario(model="custom", **shaped))


# --- over HTTP: one evaluate per canonical query ---------------------------------------------


def test_the_same_canonical_query_is_evaluated_once(client, counted):
    first = client.get("/api/scenario?dp=2&tp=4&microbatches=8")
    again = client.get("/api/scenario?microbatches=8&tp=4&dp=2&pp=2&zero=0")
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    assert len(counted.calls) == 1
    client.get("/api/scenario?dp=2&tp=4&microbatches=16")
    assert len(counted.calls) == 2
    lru = client.app.state.scenario_cache.lru
    assert (lru.entries, lru.misses, lru.hits) == (2, 2, 1)
    assert lru.bytes > len(first.content)  # identity and gzip bytes, plus the key


def test_the_cached_bytes_are_the_json_the_api_sent_before(client):
    s = scenario(dp="4", pp="4", schedule="interleaved", virtual_stages="2", microbatches="8")
    # The app's evaluator: evaluate plus the error band the web layer adds before caching.
    before = JSONResponse({**evaluate(s), "error_band": client.app.state.fidelity.band(s)}).body
    for encoding in ("identity", "gzip"):
        r = client.get("/api/scenario", params=s.query(), headers={"Accept-Encoding": encoding})
        assert r.headers["content-type"] == "application/json"
        assert r.headers.get("content-encoding", "identity") == encoding
        assert r.content == before  # httpx has undone the gzip


def test_pages_and_derived_apis_reuse_the_apis_entry(client, counted):
    query = "dp=2&tp=2&pp=4&microbatches=8&schedule=interleaved&virtual_stages=2"
    api = client.get(f"/api/scenario?{query}").json()
    for path in ("/", "/flow"):
        page = client.get(f"{path}?{query}&color=dp")
        assert page.status_code == 200
        assert page_data(page.text)["model"] == api
    assert client.get(f"/api/flow?{query}").status_code == 200
    assert client.get(f"/api/orders?{query}").status_code == 200
    assert len(counted.calls) == 1


def test_a_bad_combination_is_the_same_422_every_time(client, counted):
    for _ in range(2):
        r = client.get("/api/scenario?schedule=interleaved")
        assert r.status_code == 422
        assert r.json()["detail"][0]["loc"] == ["query", "virtual_stages"]
    assert client.app.state.scenario_cache.lru.entries == 0


# --- ETag and 304 ----------------------------------------------------------------------------


def test_the_etag_names_the_version_and_a_repeat_with_it_is_a_304(client):
    r = client.get("/api/scenario?dp=4")
    etag = r.headers["etag"]
    assert etag.startswith(f'W/"{client.app.version}-')
    assert r.headers["cache-control"] == "public, max-age=3600"
    for sent in (etag, etag.removeprefix("W/"), f'"other", {etag}', "*"):
        again = client.get("/api/scenario?dp=4", headers={"If-None-Match": sent})
        assert again.status_code == 304, sent
        assert again.content == b"" and again.headers["etag"] == etag
    assert client.get("/api/scenario?dp=4", headers={"If-None-Match": '"other"'}).status_code == 200
    assert client.get("/api/scenario?dp=8").headers["etag"] != etag


# --- the byte bound --------------------------------------------------------------------------


def fetch(lru: ByteLRU, computed: list[str], key: str, size: int = 30) -> bytes:
    def compute() -> bytes:
        computed.append(key)
        return b"x" * size

    return lru.get_or_compute(key, compute)


def test_the_bound_evicts_the_least_recently_used_and_is_never_exceeded():
    lru, computed = ByteLRU(100, len), []  # each entry is 30 bytes plus a 1-byte key
    for key in "abc":
        fetch(lru, computed, key)
    fetch(lru, computed, "a")  # a is now the most recently used; b the least
    fetch(lru, computed, "d")
    assert (lru.entries, lru.bytes, lru.evictions) == (3, 93, 1)
    for key in "acd":
        fetch(lru, computed, key)
    assert computed == ["a", "b", "c", "d"]  # a, c and d were kept
    fetch(lru, computed, "b")
    assert computed[-1] == "b" and lru.bytes <= 100
    for n in range(50):
        fetch(lru, computed, f"k{n}", size=n)
        assert lru.bytes <= 100


def test_an_entry_larger_than_the_bound_is_returned_but_not_kept():
    lru, computed = ByteLRU(100, len), []
    fetch(lru, computed, "a")
    assert len(fetch(lru, computed, "big", size=100)) == 100  # 101 with its key
    assert (lru.entries, lru.bytes) == (1, 31)
    fetch(lru, computed, "big", size=100)
    assert computed == ["a", "big", "big"]


def test_a_bound_of_zero_keeps_nothing(tmp_path):
    settings = Settings(db=tmp_path / "t.sqlite3", ingest_token="t" * 32, scenario_cache_bytes=0)
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/scenario").status_code == 200
        assert client.get("/").status_code == 200
        lru = client.app.state.scenario_cache.lru
        assert (lru.entries, lru.bytes, lru.misses) == (0, 0, 2)


def test_the_bound_comes_from_the_environment_within_limits(monkeypatch):
    monkeypatch.setenv("MESHSCOPE_SCENARIO_CACHE_BYTES", "1048576")
    assert Settings().scenario_cache_bytes == 1 << 20
    monkeypatch.setenv("MESHSCOPE_SCENARIO_CACHE_BYTES", "-1")
    with pytest.raises(ValueError, match="scenario_cache_bytes"):
        Settings()


# --- single flight ---------------------------------------------------------------------------


def ask_at_once(lru: ByteLRU, compute, threads: int = 8) -> list:
    """Every thread asks for one key; each result (or error) in thread order."""
    results: list = [None] * threads

    def ask(i: int) -> None:
        try:
            results[i] = lru.get_or_compute("k", compute)
        except ScenarioError as exc:
            results[i] = exc

    workers = [threading.Thread(target=ask, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(10)
    return results


def test_concurrent_first_requests_for_one_key_compute_it_once():
    lru, calls = ByteLRU(1 << 20, len), []

    def compute() -> bytes:
        calls.append(1)
        wait_for(lambda: lru.hits == 7)  # every other thread is waiting on this result
        return b"view model"

    results = ask_at_once(lru, compute)
    assert len(calls) == 1
    assert all(r is results[0] for r in results) and results[0] == b"view model"
    assert (lru.misses, lru.hits, lru.entries) == (1, 7, 1)


def test_waiters_share_the_first_requests_error_and_nothing_is_kept():
    lru, calls = ByteLRU(1 << 20, len), []

    def compute() -> bytes:
        calls.append(1)
        wait_for(lambda: lru.hits == 7)
        raise ScenarioError("microbatches", "too many")

    results = ask_at_once(lru, compute)
    assert len(calls) == 1
    assert all(isinstance(r, ScenarioError) and r.field == "microbatches" for r in results)
    assert lru.entries == 0
    assert lru.get_or_compute("k", lambda: b"ok") == b"ok"  # a later request tries again


def test_the_cached_bytes_are_one_json_dumps_though_made_in_pieces():
    import json

    from app.api.scenario_cache import render
    from app.core.evaluate import evaluate

    model = evaluate(Scenario(pp=8, microbatches=256, schedule="1f1b"))  # > 1,000 events
    assert len(model["timeline"]["events"]) > 1000
    one = json.dumps(model, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    assert render(model) == one.encode("utf-8")
