"""The run page opens its scenario with the measured durations (issue 25): the analysis
carries ``flow_query``, the a-priori prediction's scenario with each stage's mean F, B (and W
for a split backward) in milliseconds and the mean fastest receive as the p2p hop; the flow
page opens it (200) and draws the replay's schedule; no scenario, no link."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.simulate import Durations
from app.importers.import_trace import main
from app.live.replay_link import flow_query
from app.main import create_app
from app.settings import Settings

GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"
pytestmark = pytest.mark.timeout(120)


def test_the_query_is_the_scenario_with_each_stages_measured_times():
    prior = {"query": {"dp": "1", "tp": "1", "pp": "2", "schedule": "zb-h1"}}
    stages = [Durations(0.0021, 0.004, 0.001, 0.0002), Durations(0.0025, 0.0041, 0.0012, 0.0004)]
    q = flow_query(prior, stages)
    assert (q["f_time"], q["b_time"], q["w_time"], q["p2p_time"]) == (
        "2.1,2.5", "4,4.1", "1,1.2", "0.3")  # fmt: skip
    assert {k: q[k] for k in prior["query"]} == prior["query"]
    assert "w_time" not in flow_query({"query": {"pp": "2"}}, stages)  # 1F1B: B is B + W


def test_no_scenario_or_no_forward_gives_no_link():
    stages = [Durations(0.001, 0.002), Durations(0.001, 0.002)]
    assert flow_query({"error": "the cost model cannot price it"}, stages) is None
    assert flow_query({"query": {"pp": "2"}}, [Durations(0.0, 0.002)] * 2) is None


def test_an_imported_runs_analysis_opens_in_the_flow_view(tmp_path):
    db = tmp_path / "r.sqlite3"
    assert (
        main([str(GLOO), "--run", "g", "--db", str(db), "--scenario", "?tp=1&model=gpt3-125m"]) == 0
    )
    with TestClient(create_app(Settings(db=db)), base_url="http://127.0.0.1") as c:
        a = c.get("/api/runs/g/analysis").json()
        q = a["flow_query"]
        assert q["model"] == "gpt3-125m" and len(q["f_time"].split(",")) == 2  # pp = 2
        f_ms = [float(x) for x in q["f_time"].split(",")]
        assert f_ms == pytest.approx([d["f"] * 1e3 for d in a["durations"]], rel=1e-3)
        page = c.get("/flow", params=q)
        assert page.status_code == 200
