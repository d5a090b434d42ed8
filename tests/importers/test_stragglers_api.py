"""GET /api/runs/{run}/stragglers on an imported run: the gloo dp=2 x pp=2 trace set whose
rank 2 sleeps in its forward (tests/fixtures/traces/gloo_dp2_pp2_slow_rank2) names rank 2,
compute, against its stage's median; the set without the sleep names nobody."""

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def _client(tmp_path, fixture: str) -> TestClient:
    db = tmp_path / "live.sqlite3"
    assert main([str(TRACES / fixture), "--run", "imp", "--db", str(db)]) == 0
    return TestClient(create_app(Settings(db=db)))


def test_the_slow_rank_is_named_with_its_phase_stage_and_excess(tmp_path):
    with _client(tmp_path, "gloo_dp2_pp2_slow_rank2") as client:
        body = client.get("/api/runs/imp/stragglers").json()
        assert body["step"] == 2 and body["steps"] == [0, 1, 2]
        first = body["stragglers"][0]
        assert (first["cause"], first["phase"], first["ranks"]) == ("rank", "compute", [2])
        layout_stage = client.get("/api/runs/imp/analysis").json()["rows"][2]["pp"]
        assert first["stage"] == layout_stage
        assert first["excess_s"] > 0.01 and first["ratio"] > 1.2
        # Nobody else is slow: rank 2's peers wait on it, they are not slow themselves.
        assert [s["ranks"] for s in body["stragglers"]] == [[2]]
        one = client.get("/api/runs/imp/stragglers", params={"step": 0, "window": 1}).json()
        assert one["steps"] == [0]


def test_a_run_without_a_slow_rank_names_nobody(tmp_path):
    with _client(tmp_path, "gloo_dp2_pp2") as client:
        assert client.get("/api/runs/imp/stragglers").json()["stragglers"] == []


def test_unknown_runs_and_steps_are_404_and_bad_windows_422(tmp_path):
    with _client(tmp_path, "gloo_dp2_pp2") as client:
        assert client.get("/api/runs/nope/stragglers").status_code == 404
        assert client.get("/api/runs/imp/stragglers", params={"step": 9}).status_code == 404
        res = client.get("/api/runs/imp/stragglers", params={"window": 0})
        assert res.status_code == 422 and "window" in res.text
