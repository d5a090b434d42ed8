"""Sweeps over context parallelism, expert parallelism and the routing imbalance (issue 27):
each valid point is the cost model's number for its scenario, and each point the core
refuses (cp not splitting the sequence, ep not dividing the experts or dp x cp, the world
past its bound, an imbalance past experts/top_k) stays in place with the field and reason."""

from __future__ import annotations

import pytest

from app.core.evaluate import evaluate
from app.core.evaluate import sweep as sw
from app.core.evaluate.sweep_params import KNOBS
from app.core.inputs.scenario import MAX_WORLD, Scenario, ScenarioError
from app.core.views.flow import flow_view

pytestmark = pytest.mark.timeout(120)

# Not the default llama3-8b: with seq_len given, its share link would drop model= and
# read as a custom model (Scenario.query omits defaults; a shape without model= is custom).
LLAMA = {"model": "llama3.2-3b", "seq_len": 32768, "tp": 2, "pp": 2, "microbatches": 4}
MIXTRAL = {"model": "mixtral-8x7b", "pp": 4, "dp": 16, "microbatches": 8, "order": "megatron-5d"}


def points(base: dict, **params) -> list[dict]:
    result = sw.sweep(Scenario.model_validate(base), sw.SweepParams(series="none", **params))
    assert result["count"] == len(result["lines"][0]["points"])
    return result["lines"][0]["points"]


def by_x(pts: list[dict]) -> dict:
    return {p["x"]: p for p in pts}


def test_the_knobs_are_offered():
    assert KNOBS["cp"] == ("cp",) and KNOBS["ep"] == ("ep",)
    assert KNOBS["routing_imbalance"] == ("routing_imbalance",)


def test_a_cp_sweep_on_a_long_sequence_cuts_step_time_and_memory_and_refuses_odd_chunks():
    pts = by_x(points(LLAMA, knob="cp", values="1,2,4,5,8"))
    assert list(pts) == [1, 2, 4, 5, 8]
    bad = pts[5]  # 32768 tokens do not split into 2 x 5 equal causal chunks
    assert not bad["valid"] and bad["field"] == "cp" and bad["key"] == "scenario.cp_chunks"
    assert bad["params"]["n"] == 10 and "2*cp" in bad["reason"]
    good = [pts[x] for x in (1, 2, 4, 8)]
    assert all(p["valid"] for p in good)
    # cp more GPUs share each sequence (dp held): activations and attention split over cp.
    steps = [p["step_time_s"] for p in good]
    peaks = [p["peak_bytes"] for p in good]
    assert steps == sorted(steps, reverse=True) and peaks == sorted(peaks, reverse=True)
    for p in good:  # each point is its own scenario's numbers
        assert p["query"].get("cp", "1") == str(p["x"])
        view = evaluate(Scenario.model_validate(p["query"]))
        assert p["step_time_s"] == pytest.approx(view["step_time_s"])
        assert p["peak_bytes"] == view["memory"]["peak_bytes"]


def test_a_cp_sweep_past_the_world_bound_is_refused_on_cp():
    pts = by_x(points({**LLAMA, "dp": 2048, "pp": 1, "tp": 8}, knob="cp", values="2,8"))
    bad = pts[8]  # 8 x 1 x 8 x 2048 = 131,072 GPUs
    assert not bad["valid"] and bad["field"] == "cp" and bad["key"] == "scenario.world_cp"
    assert bad["params"]["world"] == 8 * 8 * 2048 > MAX_WORLD


def test_an_ep_sweep_on_mixtral_cuts_expert_memory_and_refuses_what_does_not_divide():
    pts = by_x(points(MIXTRAL, knob="ep", values="1,2,3,4,8,16"))
    three, sixteen = pts[3], pts[16]
    assert not three["valid"] and three["field"] == "ep" and three["key"] == "scenario.ep_divides"
    assert not sixteen["valid"] and sixteen["field"] == "ep"
    assert sixteen["key"] == "scenario.ep_experts"  # 8 experts cannot split 16 ways
    good = [pts[x] for x in (1, 2, 4, 8)]
    assert all(p["valid"] for p in good)
    peaks = [p["peak_bytes"] for p in good]
    assert peaks == sorted(peaks, reverse=True) and peaks[-1] < peaks[0]


def test_a_routing_imbalance_sweep_takes_decimals_slows_the_step_and_refuses_past_its_bound():
    base = {**MIXTRAL, "dp": 8, "ep": 8}
    pts = by_x(points(base, knob="routing_imbalance", values="1,1.25,1.5,2,4,5"))
    assert list(pts) == [1, 1.25, 1.5, 2, 4, 5]
    bad = pts[5]  # top_k = 2 of 8 experts: the busiest takes at most 8/2 = 4 x the mean
    assert not bad["valid"] and bad["field"] == "routing_imbalance"
    steps = [pts[x]["step_time_s"] for x in (1, 1.25, 1.5, 2, 4)]
    assert steps == sorted(steps) and steps[-1] > steps[0]
    assert pts[1.5]["query"]["routing_imbalance"] == "1.5"


def test_cp_lines_over_an_ep_sweep():
    base = {**MIXTRAL, "dp": 4, "seq_len": 8192}
    result = sw.sweep(
        Scenario.model_validate(base),
        sw.SweepParams(knob="ep", values="1,2,4,8", series="cp", series_values="1,2"),
    )
    lines = {li["key"]: by_x(li["points"]) for li in result["lines"]}
    assert set(lines) == {"1", "2"}
    assert not lines["1"][8]["valid"]  # ep 8 does not divide dp x cp = 4 x 1
    assert lines["2"][8]["valid"]  # ... but divides 4 x 2
    assert lines["2"][8]["query"]["cp"] == "2"


@pytest.mark.parametrize(
    ("knob", "values", "key"),
    [
        ("routing_imbalance", "1.x", "sweep.not_number"),
        ("routing_imbalance", "0.5", "sweep.not_number"),
        ("routing_imbalance", "1e3", "sweep.not_number"),
        ("cp", "1.5", "sweep.not_whole"),
    ],
)
def test_values_that_are_not_numbers_of_the_knob_are_refused_on_values(knob, values, key):
    with pytest.raises(ScenarioError) as err:
        sw.sweep(Scenario.model_validate(LLAMA), sw.SweepParams(knob=knob, values=values))
    assert err.value.field == "values" and err.value.key == key


def test_ep_cannot_be_both_the_knob_and_the_lines():
    with pytest.raises(ScenarioError) as err:
        sw.resolve(sw.SweepParams(knob="ep", values="1,2", series="ep", series_values="1"))
    assert err.value.field == "series" and err.value.key == "sweep.same_field"


def _busiest(flow: dict, field: str) -> float:
    return max(sum(c[field]["F"] + c[field]["B"] for c in row) for row in flow["comm"]["chunks"])


def test_the_ring_and_all_to_all_shares_are_the_flows_exposed_seconds_over_the_step():
    base = {**LLAMA, "seq_len": 8192, "gpus_per_node": 2}  # the ring crosses nodes: exposed
    pts = by_x(points(base, knob="cp", values="1,4"))
    assert "cp_share" not in pts[1] and "ep_share" not in pts[1]  # 3D points as before
    flow = flow_view(evaluate(Scenario.model_validate(pts[4]["query"])))
    want = base["microbatches"] * _busiest(flow, "cp_exposed_s") / pts[4]["step_time_s"]
    assert pts[4]["cp_share"] == pytest.approx(want) and want > 0
    assert "ep_share" not in pts[4]
    moe = by_x(points({**MIXTRAL, "dp": 8}, knob="ep", values="1,8"))
    assert "ep_share" not in moe[1]
    flow = flow_view(evaluate(Scenario.model_validate(moe[8]["query"])))
    want = MIXTRAL["microbatches"] * _busiest(flow, "a2a_exposed_s") / moe[8]["step_time_s"]
    assert moe[8]["ep_share"] == pytest.approx(want) and want > 0
