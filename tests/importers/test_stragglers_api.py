"""GET /api/runs/{run}/stragglers on an imported run: the gloo dp=2 x pp=2 trace set whose
rank 2 sleeps in its forward (tests/fixtures/traces/gloo_dp2_pp2_slow_rank2) names rank 2,
compute, against its stage's median; the set without the sleep names nobody."""

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.inputs.protocol import ProbeRecord
from app.importers.import_trace import main
from app.live.analysis import layout_of
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


def test_one_dp_group_slow_in_its_all_reduce_is_a_slow_link_not_a_slow_gpu(tmp_path):
    """dp=2 x tp=2 x pp=2: one DP group's gradient all-reduce takes 50 ms where the other
    three groups' take 2 ms, every rank's compute the same: a slow link, named with its
    group and axis, and no rank named slow."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
    from support import TOKEN, records, run_info

    info = run_info("link", dp=2, tp=2, pp=2, steps=3)
    slow_group = sorted(layout_of(info).groups("dp")[1])
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(3):
        for r in records(info, step, t0=1000.0 + step):
            if r["rank"] in slow_group:
                for e in r["events"]:
                    if e["kind"] == "dp":
                        e["end"] = e["start"] + 0.05
                    elif e["kind"] == "optim":  # after the all-reduce, as it runs
                        e["start"], e["end"] = e["start"] + 0.048, e["end"] + 0.048
            ops.append(("record", (ProbeRecord.model_validate(r), 2.0)))
    app = create_app(Settings(db=tmp_path / "l.sqlite3", ingest_token=TOKEN))
    with TestClient(app) as client:
        app.state.live.store.transaction(ops)
        found = client.get("/api/runs/link/stragglers").json()["stragglers"]
    assert [(s["cause"], s["phase"], s.get("axis"), s["ranks"]) for s in found] == [
        ("link", "dp", "dp", slow_group)
    ]
    assert found[0]["ratio"] > 2
