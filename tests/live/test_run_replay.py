"""On /runs/{run}, "replay" and "predicted" are two things (app.live.analysis): the replay
re-simulates the step with its own measured F/B/W (so it matches by construction), the
prediction is the cost model's a-priori estimate for the run's configuration on a named
hardware entry; and every share of the step has one basis, the advice's and the table's."""

import re
import warnings
from pathlib import Path

import pytest
from killed_run import tp_heavy
from support import TOKEN, records, run_info

from app.api.hardware import load_registry
from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.hardware_profile import profile_of
from app.core.inputs.protocol import ProbeRecord
from app.live import a_priori
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "r.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def seed(client, info, steps, make=records):
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(steps):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in make(info, step)]
    client.app.state.live.store.transaction(ops)


def test_the_replay_is_named_replay_and_the_old_field_is_the_same_object(client):
    info = run_info("replayed", dp=2, tp=2, pp=2, steps=4)
    seed(client, info, 4)
    a = client.get("/api/runs/replayed/analysis").json()
    assert a["replay"] == a["predicted"]  # the old name kept for API readers, same thing
    assert a["replay"]["makespan_s"] > 0 and a["measured"]["step_time_s"] > 0


def test_the_a_priori_prediction_is_the_cost_model_on_a_named_hardware_entry(client):
    info = run_info("a-priori", dp=2, tp=2, pp=2, steps=3)
    seed(client, info, 3)
    p = client.get("/api/runs/a-priori/analysis").json()["a_priori"]
    # A CPU run declares no peak and this server loaded no profile: the default preset,
    # and the page is told so.
    assert (p["hardware"], p["basis"], p["device"]) == ("h100-sxm", "default", "cpu")
    s = a_priori.scenario_of(info, "h100-sxm")
    view = evaluate(s)
    assert p["step_time_s"] == pytest.approx(view["step_time_s"])
    assert p["pipeline_s"] == pytest.approx(view["breakdown"]["pipeline_s"])
    assert (s.dp, s.tp, s.pp, s.layers, s.hidden, s.dtype) == (2, 2, 2, 2, 64, "fp32")
    # Nothing measured went in: another run of the same shape, 10x slower, predicts the same.
    slow = run_info("a-priori-slow", dp=2, tp=2, pp=2, steps=3)
    seed(client, slow, 3, lambda i, st: records(i, st, f=0.1, b=0.2))
    same = client.get("/api/runs/a-priori-slow/analysis").json()["a_priori"]
    assert same["step_time_s"] == pytest.approx(p["step_time_s"])


def test_which_hardware_the_prediction_is_made_on(tmp_path):
    bf16 = run_info("gpu", peak_tflops=312.0).model_copy(update={"dtype": "bf16"})
    assert a_priori.hardware_for(bf16, HARDWARE) == ("a100-40g", "declared_peak")
    h100 = bf16.model_copy(update={"peak_tflops": 980.0})
    assert a_priori.hardware_for(h100, HARDWARE) == ("h100-sxm", "declared_peak")
    cpu = run_info("cpu")
    assert a_priori.hardware_for(cpu, HARDWARE) == ("h100-sxm", "default")
    # One loaded profile (this box, calibrated): the one a peak-less run is predicted on.
    box = profile_of(HARDWARE["l40s"]).model_copy(
        update={"name": "my-box", "peak_tflops": 0.2, "fp32_tflops": 0.0}  # as calibrate writes
    )
    (tmp_path / "box.json").write_text(box.model_dump_json())
    registry = load_registry([tmp_path / "box.json"])
    assert a_priori.hardware_for(cpu, registry) == ("my-box", "only_profile")
    tiny = cpu.model_copy(update={"peak_tflops": 0.25})  # a declared peak: the nearest entry
    assert a_priori.hardware_for(tiny, registry) == ("my-box", "declared_peak")


def test_the_advice_and_the_table_share_one_basis(client):
    info = run_info("tp-heavy", dp=1, tp=2, pp=2, steps=3)
    seed(client, info, 3, tp_heavy)
    a = client.get("/api/runs/tp-heavy/analysis").json()
    shares = a["shares"]
    assert shares["basis"] == "mean_rank_step"
    mean = a["bubble"]["mean"]  # the table's rows: mean seconds per rank
    assert shares["step_time_s"] == pytest.approx(mean["step_time_s"])
    table_tp = mean["tp"] / shares["step_time_s"]
    (tp,) = [x for x in a["advice"] if x["rule"] == "tp_comm"]
    assert f"TP communication is {table_tp:.0%} of the step" in tp["message"]
    # The old basis (busiest rank's TP over the slowest rank's step) reads otherwise here.
    ranks = a["bubble"]["per_rank"]
    old = max(r["tp"] for r in ranks) / max(r["step_time_s"] for r in ranks)
    assert f"{old:.0%}" != f"{table_tp:.0%}"


def test_the_page_says_replay_and_keeps_predicted_for_the_cost_model(client):
    info = run_info("words", dp=1, pp=2, steps=2)
    seed(client, info, 2)
    html = client.get("/runs/words").text
    table = re.search(r'<table class="causes compare" id="compare-table">(.*?)</table>', html,
                      re.S).group(1)  # fmt: skip
    assert re.findall(r"<th>([^<]*)</th>", table) == [
        "", "measured", "replay", "predicted (cost model)"
    ]  # fmt: skip
    assert (
        "Replay vs measured, per action" in html
        and "grey ghost under each row is the replay" in html
    )
    zh = client.get("/runs/words?lang=zh").text
    assert "回放" in zh and "预测（成本模型）" in zh
    # The page's scripts read the replay under its new name only.
    for js in ("live_page.js", "live_timeline.js", "live_charts.js"):
        text = (ROOT / "static" / "js" / js).read_text()
        assert "a.predicted" not in text and 'live.predicted"' not in text, js
