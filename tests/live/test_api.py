"""HTTP: runs list and detail, steps for replay, analysis, /metrics, and the two pages."""

import re
import warnings

import pytest
from prometheus_client import CONTENT_TYPE_LATEST
from support import TOKEN, records, run_info

from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "a.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def _seed(client, run="api-run", steps=4, dp=2, pp=2):
    """Write through the app's own store, as ingest would."""
    live = client.app.state.live
    info = run_info(run, dp=dp, pp=pp, steps=steps)
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(steps):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in records(info, step)]
    live.store.transaction(ops)
    return info


def test_runs_list_and_one_run(client):
    _seed(client)
    (row,) = client.get("/api/runs").json()["runs"]
    assert (row["run"], row["last_step"], row["records"], row["dp"]) == ("api-run", 3, 16, 2)
    run = client.get("/api/runs/api-run").json()
    assert run["info"]["pp"] == 2 and len(run["ranks"]) == 4
    assert {r["state"] for r in run["ranks"]} == {"done"}
    assert [p["step"] for p in run["trend"]] == [0, 1, 2, 3]


def test_unknown_and_malformed_run_names(client):
    assert client.get("/api/runs/nope").status_code == 404
    assert client.get("/api/runs/bad%20name").status_code == 422
    assert client.get("/api/runs/nope/steps").status_code == 404


def test_steps_since_returns_later_whole_steps(client):
    _seed(client)
    body = client.get("/api/runs/api-run/steps?since=1").json()
    assert sorted({r["step"] for r in body["records"]}) == [2, 3] and body["next_since"] is None
    assert client.get("/api/runs/api-run/steps?since=-5").status_code == 422


def test_analysis_of_the_latest_and_of_a_chosen_step(client):
    _seed(client)
    latest = client.get("/api/runs/api-run/analysis").json()
    assert latest["step"] == 3 and latest["complete"]
    chosen = client.get("/api/runs/api-run/analysis?step=1").json()
    assert chosen["step"] == 1 and chosen["window"] == [0, 1]  # durations from step 1 only
    assert client.get("/api/runs/api-run/analysis?step=9").status_code == 404


def test_metrics_are_prometheus_text(client):
    _seed(client)
    resp = client.get("/metrics")
    assert resp.headers["content-type"] == CONTENT_TYPE_LATEST  # prometheus_client's text format
    text = resp.text
    names = ("meshscope_viewers", "meshscope_ingest_rate",
             "meshscope_viewer_dropped_frames_total", "meshscope_viewer_kicked_total")  # fmt: skip
    for name in names:
        assert re.search(rf"^# TYPE {name} (gauge|counter)$", text, re.M), name
        assert re.search(rf"^{name} \d", text, re.M), name
    assert re.search(r'^meshscope_run_step_time_seconds\{run="api-run"\} [0-9.e-]+$', text, re.M)


def test_the_pages_render_and_load_nothing_from_outside(client):
    _seed(client)
    listing = client.get("/runs")
    assert listing.status_code == 200 and 'href="/runs/api-run"' in listing.text
    page = client.get("/runs/api-run")
    assert page.status_code == 200 and "live_page.js" in page.text
    assert client.get("/runs/not-yet").status_code == 404  # tests/live/test_run_pages.py
    for html in (listing.text, page.text):
        srcs = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert all(s.startswith("/") for s in srcs), srcs


def test_live_pages_speak_chinese_and_refuse_an_unknown_language(client):
    from app import i18n

    _seed(client, "zh-run", steps=2, dp=1)
    zh, en = i18n.strings("zh"), i18n.strings("en")
    for path in ("/runs/zh-run?lang=zh", "/runs?lang=zh"):
        page = client.get(path)
        assert page.status_code == 200
        assert '<html lang="zh-CN">' in page.text
        assert zh["nav.runs"] in page.text
    live = client.get("/runs/zh-run?lang=zh").text
    for key in ("live.where", "live.trend", "live.advice", "live.metric.idle_frac"):
        assert zh[key] in live and en[key] not in live, key
    assert "dp 1 × tp 1 × pp 2 · 1f1b · 4 个微批次" in live  # the config line, server-rendered
    assert en["live.where"] in client.get("/runs/zh-run").text
    bad = client.get("/runs/zh-run?lang=fr")
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["query", "lang"]
