"""Trend sweeps of issue 27's last axes: FP8 on and off as lines (one per recipe), and the
HSDP shard group as a knob; each point is the scenario the overview would price."""

import pytest

from app.core.evaluate import evaluate
from app.core.evaluate.sweep import sweep
from app.core.evaluate.sweep_params import SweepParams
from app.core.inputs.scenario import Scenario, ScenarioError

H100 = dict(model="llama3-70b", dp=8, tp=8, pp=4, microbatches=32, hardware="h100-sxm")


def _points(out, key):
    return next(line for line in out["lines"] if line["key"] == key)["points"]


def test_fp8_lines_are_the_recipes_each_priced_as_its_scenario():
    base = Scenario(**H100)
    out = sweep(base, SweepParams(knob="tp", values="4,8", series="fp8"))
    assert [line["key"] for line in out["lines"]] == ["none", "tensorwise", "blockwise"]
    for key in ("none", "tensorwise"):
        for pt, tp in zip(_points(out, key), (4, 8), strict=True):
            want = evaluate(Scenario(**{**H100, "tp": tp, "fp8": key}), lean=True)
            assert pt["step_time_s"] == pytest.approx(want["step_time_s"])
    off, on = _points(out, "none"), _points(out, "tensorwise")
    assert all(b["step_time_s"] < a["step_time_s"] for a, b in zip(off, on, strict=True))


def test_fp8_on_hardware_without_it_is_refused_point_by_point():
    base = Scenario(**{**H100, "hardware": "a100-80g"})
    out = sweep(
        base, SweepParams(knob="tp", values="4,8", series="fp8", series_values="none,tensorwise")
    )
    refused = _points(out, "tensorwise")
    assert all(p.get("field") == "fp8" for p in refused), refused
    assert all(p["step_time_s"] > 0 for p in _points(out, "none"))


def test_an_unknown_recipe_names_series_values():
    with pytest.raises(ScenarioError) as err:
        sweep(
            Scenario(**H100), SweepParams(knob="tp", values="8", series="fp8", series_values="int4")
        )
    assert err.value.field == "series_values" and "int4" in err.value.reason


def test_dp_shard_is_a_knob_and_a_bad_one_is_a_refused_point():
    q = dict(model="llama3-8b", dp=16, tp=1, pp=1, zero=3, microbatches=4, gpus_per_node=8)
    out = sweep(Scenario(**q), SweepParams(knob="dp_shard", values="3,8,16", series="none"))
    pts = out["lines"][0]["points"]
    assert pts[0].get("field") == "dp_shard"  # 3 does not divide 16
    want = evaluate(Scenario(**q, dp_shard=8), lean=True)["step_time_s"]
    assert pts[1]["step_time_s"] == pytest.approx(want)
    assert pts[2]["step_time_s"] == pytest.approx(evaluate(Scenario(**q), lean=True)["step_time_s"])
