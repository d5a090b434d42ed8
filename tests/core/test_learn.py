"""The guided path's steps: the article's order, real quiz questions, valid scenarios, and
widgets whose numbers are the core's own and tell each step's story."""

from __future__ import annotations

import pytest

from app.core.evaluate import evaluate
from app.core.evaluate.learn import default_run, memory_parts, time_parts, widget
from app.core.inputs.scenario import Scenario
from app.core.teach import learn, quiz


def test_the_steps_follow_the_article():
    assert [s.key for s in learn.STEPS] == ["one_gpu", "dp", "zero", "tp", "pp", "3d", "tuning"]
    assert all(s.quiz in quiz.BY_ID for s in learn.STEPS)
    assert len({s.quiz for s in learn.STEPS}) == len(learn.STEPS)
    assert learn.neighbours("one_gpu") == (None, learn.BY_KEY["dp"])
    assert learn.neighbours("tuning") == (learn.BY_KEY["3d"], None)
    assert learn.href("3d", "zh") == "/learn?step=3d&lang=zh"


def _w(key: str) -> dict:
    return widget(learn.BY_KEY[key], default_run())


@pytest.mark.parametrize("key", [s.key for s in learn.STEPS if s.widget in ("memory", "time")])
def test_bar_widgets_are_evaluate_numbers(key):
    step, w = learn.BY_KEY[key], _w(key)
    assert len(w["variants"]) == len(step.variants)
    for v, got in zip(step.variants, w["variants"], strict=True):
        view = evaluate(Scenario.model_validate(v.pairs()))
        mem = view["memory"]
        peak = mem["per_stage"][mem["peak_stage"]]
        assert got["peak_bytes"] == mem["peak_bytes"] and got["fits"] == mem["fits"]
        assert sum(got["memory"].values()) == pytest.approx(peak["total_bytes"])
        assert got["memory"] == memory_parts(peak)
        assert got["time"] == time_parts(view)
        assert sum(got["time"].values()) == pytest.approx(view["step_time_s"])
        assert got["tokens_per_s"] == view["tokens_per_s"]


def test_one_gpu_holds_only_the_small_model():
    assert [v["fits"] for v in _w("one_gpu")["variants"]] == [True, False, False]


def test_dp_keeps_memory_and_adds_throughput():
    vs = _w("dp")["variants"]
    assert len({v["peak_bytes"] for v in vs}) == 1
    rates = [v["tokens_per_s"] for v in vs]
    assert rates == sorted(rates) and rates[-1] > 4 * rates[0]


def test_zero_stages_shrink_the_replicated_states():
    vs = _w("zero")["variants"]
    assert [v["memory"]["optimizer"] > 0 for v in vs] == [True] * 4
    opt = [v["memory"]["optimizer"] for v in vs]
    assert opt[0] == pytest.approx(8 * opt[1])  # ZeRO-1 shards it over DP 8
    grads = [v["memory"]["grads"] for v in vs]
    assert grads[2] < grads[1]
    weights = [v["memory"]["weights"] for v in vs]
    assert weights[3] < weights[2]
    assert not vs[0]["fits"] and vs[3]["fits"]


def test_tp_divides_memory_and_grows_its_communication():
    vs = _w("tp")["variants"]
    peaks = [v["peak_bytes"] for v in vs]
    assert peaks == sorted(peaks, reverse=True)
    shares = [v["tp_share"] for v in vs]
    assert shares[0] == 0 and shares == sorted(shares)
    assert shares == [v["time"]["tp"] / v["step_time_s"] for v in vs]
    assert _w("tp")["note"] == "tp_share" and _w("dp")["note"] == "rate"


def test_pp_shows_the_bubble_formula_beside_the_timeline():
    w = _w("pp")
    assert w["bubble"]["p"] == 4 and w["bubble"]["m"] == 8
    assert w["bubble"]["formula"] == pytest.approx(3 / 11)
    view = evaluate(Scenario.model_validate(learn.PIPE[0].pairs()))
    assert w["view"]["timeline"] == view["timeline"]
    assert w["bubble"]["simulated"] == view["timeline"]["bubble_fraction"]


def test_3d_is_the_articles_mesh_over_two_nodes():
    w = _w("3d")
    lay = w["layout"]
    assert lay["world_size"] == 8 and lay["nodes"] == 2
    assert lay["ranks"][5] == {"rank": 5, "dp": 1, "pp": 0, "tp": 1, "node": 1}
    assert lay["crosses_node"] == {"tp": False, "pp": False, "dp": True}


def test_tuning_more_microbatches_shrinks_the_bubble_share():
    vs = _w("tuning")["variants"]
    shares = [v["time"]["bubble"] / v["step_time_s"] for v in vs]
    assert shares == sorted(shares, reverse=True)
    rates = [v["tokens_per_s"] for v in vs]
    assert rates == sorted(rates)
