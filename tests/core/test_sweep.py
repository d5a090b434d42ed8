"""Sweeps: the article's formulas along a knob, invalid points kept, and the bounds."""

import pytest

from app.core.evaluate import evaluate
from app.core.evaluate import sweep as sw
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import ScheduleName


def run(base: Scenario, **params) -> dict:
    return sw.sweep(base, sw.SweepParams(**params))


def line(result: dict, key: str = "") -> list[dict]:
    return next(li["points"] for li in result["lines"] if li["key"] == key)


def test_sweeping_microbatches_gives_the_1f1b_bubble_formula_at_equal_costs():
    result = run(Scenario(pp=4, f_time=1), knob="microbatches", start=1, stop=32, series="none")
    points = line(result)
    assert [p["x"] for p in points] == list(range(1, 33))
    for p in points:
        m = p["x"]
        assert p["valid"]
        assert p["bubble_fraction"] == pytest.approx(3 / (m + 3))  # (p-1)/(m+p-1)
        assert p["bubble_over_ideal"] == pytest.approx(3 / m)  # (p-1)/m
        assert p["query"].get("microbatches", "4") == str(m)


def test_each_point_matches_the_scenario_its_link_opens():
    result = run(Scenario(pp=2, tp=4), knob="dp_fixed_microbatch", values="1,2,4", series="none")
    for p in line(result):
        view = evaluate(Scenario.model_validate(p["query"]))
        assert p["step_time_s"] == pytest.approx(view["step_time_s"])
        assert p["peak_bytes"] == view["memory"]["peak_bytes"]
        assert p["mfu"] == pytest.approx(view["mfu"])
        assert p["tp_share"] == pytest.approx(view["breakdown"]["tp_s"] / view["step_time_s"])
        assert p["dp_share"] == pytest.approx(view["breakdown"]["dp_s"] / view["step_time_s"])
        assert 0 < p["pp_share"] < 1


def test_interleaved_points_torch_refuses_are_marked_not_dropped():
    base = Scenario(pp=4, schedule="interleaved", virtual_stages=2, f_time=1)
    points = line(run(base, knob="microbatches", start=1, stop=12, series="none"))
    assert [p["x"] for p in points] == list(range(1, 13))
    bad = [p for p in points if not p["valid"]]
    # torch's rule: m % max(1, m // p) == 0, so on p = 4 only 9 and 11 of 1..12 are refused.
    assert [p["x"] for p in bad] == [9, 11]
    for p in bad:
        assert p["field"] == "microbatches"
        assert "rounds" in p["reason"]
        assert p["query"]["microbatches"] == str(p["x"])  # the link shows the page's reason
        assert "bubble_fraction" not in p


def test_dp_at_fixed_global_batch_keeps_dp_times_b_times_m_constant():
    base = Scenario(dp=2, micro_batch_size=2, microbatches=16)  # B = 64
    result = run(base, knob="dp_fixed_global_batch", values="1,2,3,4,8,16,32,64")
    assert result["global_batch"] == 64
    for li in result["lines"]:
        for p in li["points"]:
            if p["x"] in (3, 64):  # 64 % (3*2) and 64 % (64*2): no whole micro-batch count
                assert not p["valid"] and p["field"] == "dp" and p["query"] is None
                continue
            q = p["query"]
            dp, m = int(q.get("dp", 2)), int(q.get("microbatches", 4))
            assert dp == p["x"] and dp * 2 * m == 64, p
    # Fixed micro-batches: the global batch grows with dp.
    grows = line(run(base, knob="dp_fixed_microbatch", values="1,4", series="none"))
    assert [p["query"]["microbatches"] for p in grows] == ["16", "16"]


def test_memory_grows_with_micro_batch_size():
    points = line(run(Scenario(), knob="micro_batch_size", values="1,2,4,8", series="none"))
    peaks = [p["peak_bytes"] for p in points]
    assert peaks == sorted(peaks) and peaks[0] < peaks[-1]
    assert all(p["capacity_bytes"] == 80 * 2**30 for p in points)
    assert [p["fits"] for p in points] == [p["peak_bytes"] <= p["capacity_bytes"] for p in points]


def test_one_line_per_schedule_each_opening_its_schedule():
    result = run(Scenario(pp=2, f_time=1), knob="microbatches", values="2,4")
    keys = [li["key"] for li in result["lines"]]
    assert keys == [s.value for s in ScheduleName if s != ScheduleName.naive]
    assert len(set(keys)) == len(keys)
    for li in result["lines"]:
        for p in li["points"]:
            assert p["query"].get("schedule", "1f1b") == li["key"]
    inter = line(result, "interleaved")
    assert inter[0]["query"]["virtual_stages"] == "2"  # interleaved needs >= 2 chunks
    assert result["count"] == 2 * len(keys)
    picked = run(Scenario(), knob="pp", values="1,2", series_values="gpipe,naive")
    assert [li["key"] for li in picked["lines"]] == ["naive", "gpipe"]


def test_a_second_knob_gives_one_line_per_value():
    result = run(Scenario(f_time=1), knob="microbatches", values="4,8", series="pp",
                 series_values="1,2,4")  # fmt: skip
    assert [li["key"] for li in result["lines"]] == ["1", "2", "4"]
    for li in result["lines"]:
        p = int(li["key"])
        for pt in li["points"]:
            assert pt["bubble_fraction"] == pytest.approx((p - 1) / (pt["x"] + p - 1))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"stop": 100}, "stop"),  # 100 values > 64
        ({"start": 8, "stop": 4}, "stop"),
        ({"values": "1,x"}, "values"),
        ({"values": "0"}, "values"),
        ({"values": "²"}, "values"),
        ({"values": ",".join(str(i) for i in range(1, 66))}, "values"),
        ({"series_values": "1f1b,fast"}, "series_values"),
        ({"series": "pp"}, "series_values"),
        ({"series": "pp", "series_values": ",".join(map(str, range(1, 10)))}, "series_values"),
        (
            {"knob": "dp_fixed_global_batch", "series": "microbatches", "series_values": "2"},
            "series",
        ),
        ({"knob": "pp", "series": "pp", "series_values": "2"}, "series"),
        ({"stop": 64, "series": "pp", "series_values": "1,2,4,8,16"}, "stop"),  # 320 points
    ],
)
def test_bounds_and_bad_specs_name_the_field(params, field):
    with pytest.raises(ScenarioError) as err:
        run(Scenario(), **params)
    assert err.value.field == field


def test_too_much_simulation_is_refused_before_any_is_done():
    base = Scenario(model="gpt3-175b", pp=32)
    with pytest.raises(ScenarioError) as err:
        run(base, knob="microbatches", start=64, stop=1024, step=64, series="none")
    assert err.value.field == "stop" and "slots" in err.value.reason


def test_doubling_ranges_and_out_of_bounds_points():
    points = line(run(Scenario(), knob="tp", start=1, stop=100, scale="doubling", series="none"))
    assert [p["x"] for p in points] == [1, 2, 4, 8, 16, 32, 64]
    # llama3-8b: 8 KV heads (Megatron gives each TP rank whole ones), 32 query heads.
    assert [p["valid"] for p in points] == [True] * 4 + [False] * 3
    assert points[4]["field"] == "tp" and "kv_heads (8)" in points[4]["reason"]
    assert points[-1]["field"] == "tp" and "heads (32)" in points[-1]["reason"]
    big = line(run(Scenario(), knob="seq_len", values=str(1 << 20), series="none"))
    assert big[0]["x"] == 1 << 20  # kept, valid or not, with a reason when not
    assert big[0]["valid"] or big[0]["reason"]


def test_a_value_outside_the_scenarios_bounds_is_an_invalid_point():
    points = line(run(Scenario(), knob="microbatches", values="4096,5000", series="none"))
    assert points[0]["valid"]
    assert not points[1]["valid"] and points[1]["field"] == "microbatches"
    assert "4096" in points[1]["reason"] and points[1]["query"] is None


def test_dp_at_fixed_global_batch_as_lines_holds_b_under_the_other_knob():
    base = Scenario(dp=2, microbatches=8)  # B = 16
    result = run(base, knob="micro_batch_size", values="1,2,4", series="dp_fixed_global_batch",
                 series_values="1,2")  # fmt: skip
    for li in result["lines"]:
        for p in li["points"]:
            q = p["query"]
            dp, m, b = (int(q.get(k, d)) for k, d in (("dp", 2), ("microbatches", 4),
                        ("micro_batch_size", 1)))  # fmt: skip
            assert (dp, b, dp * b * m) == (int(li["key"]), p["x"], 16)
