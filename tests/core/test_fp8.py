"""FP8 recipes in the cost model (cost/fp8.py): the FP8 GEMM time and the casts in closed form
on small cases, the per-GEMM filter, the FP8 weight copies, the hardware refusals, the exports
and the accuracy board's FP8 rows."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.cost import compute, fp8
from app.core.cost.memory_states import layer_matmul_params
from app.core.cost.shapes import Gemm
from app.core.evaluate import evaluate
from app.core.export import export
from app.core.fidelity import board
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.training import Training

H100 = HARDWARE["h100-sxm"]
BIG = dict(model="llama3-70b", dp=8, tp=8, pp=4, microbatches=32)


def tw(**kw) -> Training:
    return Training(fp8="tensorwise", **kw)


# --- closed forms ---------------------------------------------------------------------------


def test_fp8_gemm_time_is_the_roofline_at_the_fp8_rate_on_a_small_case():
    g = Gemm(4096, 4096, 4096)
    flop = 2.0 * 4096**3
    ratio = 1979.0 / 989.0
    # The efficiency curve at the GEMM's size over the FP8 : 16-bit rate ratio.
    gflop = flop / ratio / 1e9
    e = H100.efficiency
    eff = e.gemm_max_fraction * gflop / (gflop + e.gemm_half_gflop)
    compute_s = flop / (1979e12 * eff)
    memory_s = (2 * 4096 * 4096 + 2 * 4096 * 4096) / (3.35e12 * e.hbm_fraction)
    assert fp8.fp8_gemm_seconds(g, H100) == pytest.approx(max(compute_s, memory_s), rel=1e-12)
    assert fp8.fp8_gemm_seconds(g, H100) < compute.gemm_seconds(g, H100, 2)


@pytest.mark.parametrize(
    ("t", "per_element"),
    [
        (tw(), 4.0),  # delayed: read 2, write the FP8 copy and its transpose
        (tw(fp8_scaling="current"), 6.0),  # current: one more read for the amax
        (Training(fp8="blockwise"), 4.0 + 2 * 4 / 128),  # an fp32 scale per 128, both copies
        (Training(fp8="mxfp8"), 4.0 + 2 * 1 / 32),  # an E8M0 byte per 32, both copies
    ],
)
def test_cast_cost_is_bytes_over_hbm_bandwidth_per_recipe(t, per_element):
    assert fp8.cast_bytes_per_element(t) == pytest.approx(per_element)
    m, n, k = 16384, 8192, 8192
    g = Gemm(m, n, k)
    gemm_s, cast_f, cast_b = fp8.gemm_plan(g, H100, t)
    bw = 3.35e12 * H100.efficiency.hbm_fraction
    # Forward: the input every micro-batch, the weight once a step (t.microbatches = 4).
    assert cast_f == pytest.approx(per_element * (m * k + k * n / t.microbatches) / bw)
    assert cast_b == pytest.approx(per_element * m * n / bw)  # the output gradient
    assert gemm_s == fp8.fp8_gemm_seconds(g, H100)


def test_a_gemm_too_small_to_gain_stays_16_bit():
    g = Gemm(128, 128, 128)
    assert fp8.gemm_plan(g, H100, tw()) == (compute.gemm_seconds(g, H100, 2), 0.0, 0.0)


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 1 << 16),
    n=st.integers(1, 1 << 15),
    k=st.integers(1, 1 << 15),
    recipe=st.sampled_from(["tensorwise", "blockwise", "mxfp8"]),
    current=st.booleans(),
)
def test_a_gemm_with_its_casts_never_costs_more_than_in_16_bit(m, n, k, recipe, current):
    scaling = "current" if current and recipe == "tensorwise" else "delayed"
    t = Training(fp8=recipe, fp8_scaling=scaling)
    g = Gemm(m, n, k)
    gemm_s, cast_f, cast_b = fp8.gemm_plan(g, HARDWARE["b200"], t)
    assert 3 * gemm_s + cast_f + cast_b <= 3 * compute.gemm_seconds(g, HARDWARE["b200"], 2)


# --- whole scenarios ------------------------------------------------------------------------


def test_fp8_none_is_the_16_bit_model_exactly():
    s = Scenario(**BIG)
    assert evaluate(Scenario(**BIG, fp8="none")) == evaluate(s)
    assert Training().fp8 == "none" and Training().gather_bytes == Training().element_bytes


def test_fp8_speeds_up_a_large_models_gemms_and_mfu_stays_against_the_bf16_peak():
    bf16 = evaluate(Scenario(**BIG))
    for q in ({"fp8": "tensorwise"}, {"fp8": "tensorwise", "fp8_scaling": "current"},
              {"fp8": "blockwise"}):  # fmt: skip
        v = evaluate(Scenario(**BIG, **q))
        assert v["step_time_s"] < bf16["step_time_s"], q
        world = 8 * 8 * 4
        mfu = v["compute"]["model_flops_per_iteration"] / (v["step_time_s"] * world * 989e12)
        assert v["mfu"] == pytest.approx(mfu) and v["compute"]["fp8"] == q["fp8"]
    # Current scaling reads every cast tensor once more than delayed scaling.
    delayed = evaluate(Scenario(**BIG, fp8="tensorwise"))["step_time_s"]
    current = evaluate(Scenario(**BIG, fp8="tensorwise", fp8_scaling="current"))["step_time_s"]
    assert current > delayed


def test_fp8_weights_keep_their_16_bit_copy_and_add_fp8_ones():
    stages = {
        f: evaluate(Scenario(**BIG, fp8=f))["memory"]["per_stage"] for f in ("none", "tensorwise")
    }
    for before, after in zip(stages["none"], stages["tensorwise"], strict=True):
        assert after["total_bytes"] >= before["total_bytes"]
        assert after["activations_bytes"] == before["activations_bytes"]  # conservative
        # 2 bytes (the FP8 weight and its transpose) per linear parameter the rank holds.
        extra = sum(before["layers"]) * layer_matmul_params(_model("llama3-70b")) / 8 * 2
        assert after["weights_bytes"] - before["weights_bytes"] == pytest.approx(extra)
    # ZeRO-3 gathers and frees the FP8 weight as it does the 16-bit one: no cache.
    t = Training(fp8="tensorwise", zero=3)
    assert fp8.weight_cache_bytes(_model("llama3-70b"), t, 8, 20) == 0.0
    assert fp8.weight_cache_bytes(_model("llama3-70b"), replace(t, zero=1), 8, 20) > 0


def _model(name):
    from app.core.inputs.presets import MODELS

    return MODELS[name]


def test_fp8_weight_gathers_move_one_byte_per_parameter():
    q = dict(model="llama3-8b", dp=8, tp=1, pp=1, zero=3, fp8="tensorwise",
             fp8_scaling="current")  # fmt: skip
    bf16 = evaluate(Scenario(**q))["comm"]["dp_bytes"]
    gathered = evaluate(Scenario(**q, fp8_param_gather=True))["comm"]["dp_bytes"]
    assert gathered < bf16


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("hw", ["a100-80g", "a100-40g"])
def test_fp8_on_hardware_without_fp8_names_the_field(hw):
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(hardware=hw, fp8="tensorwise"))
    assert err.value.field == "fp8" and "no FP8 tensor cores" in err.value.reason


def test_mxfp8_needs_blackwell():
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(hardware="h100-sxm", fp8="mxfp8"))
    assert err.value.field == "fp8" and "Blackwell" in err.value.reason
    assert evaluate(Scenario(hardware="b200", fp8="mxfp8"))["step_time_s"] > 0


@pytest.mark.parametrize(
    ("q", "field"),
    [({"fp8_scaling": "current"}, "fp8_scaling"), ({"fp8_param_gather": True}, "fp8_param_gather"),
     ({"fp8": "blockwise", "fp8_scaling": "current"}, "fp8_scaling")],
)  # fmt: skip
def test_fp8_options_without_their_recipe_name_the_field(q, field):
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(**q))
    assert err.value.field == field


def test_the_share_link_round_trips_the_recipe():
    s = Scenario(fp8="tensorwise", fp8_scaling="current", fp8_param_gather=True, zero=3)
    q = s.query()
    assert (q["fp8"], q["fp8_scaling"], q["fp8_param_gather"]) == ("tensorwise", "current", "true")
    assert Scenario(**q) == s
    assert "fp8" not in Scenario().query()


# --- exports --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "flags"),
    [
        ({"fp8": "tensorwise"}, "--fp8-format hybrid \\\n--fp8-recipe delayed"),
        ({"fp8": "tensorwise", "fp8_scaling": "current"},
         "--fp8-format hybrid \\\n--fp8-recipe tensorwise"),
        ({"fp8": "blockwise"}, "--fp8-format e4m3 \\\n--fp8-recipe blockwise"),
        ({"fp8": "mxfp8", "hardware": "b200"}, "--fp8-format e4m3 \\\n--fp8-recipe mxfp8"),
    ],
)  # fmt: skip
def test_megatron_export_spells_the_recipe(q, flags):
    e = export("megatron", Scenario(**q))
    assert e.ok and flags in e.text
    assert "--fp8" not in export("megatron", Scenario()).text


def test_megatron_fp8_param_gather_needs_a_sharded_optimizer():
    e = export("megatron", Scenario(fp8="tensorwise", fp8_param_gather=True))
    assert not e.ok and e.code == "megatron_fp8_param_gather"
    ok = export("megatron", Scenario(fp8="tensorwise", fp8_param_gather=True, zero=1))
    assert ok.ok and "--fp8-param-gather" in ok.text


def test_torchtitan_export_takes_its_recipes_and_refuses_the_others():
    e = export("torchtitan", Scenario(fp8="tensorwise", fp8_scaling="current"))
    assert e.ok and 'converters = ["quantize.linear.float8"]' in e.text
    assert '[quantize.linear.float8]\nrecipe_name = "tensorwise"' in e.text
    mx = export("torchtitan", Scenario(fp8="mxfp8", hardware="b200"))
    assert mx.ok and '[quantize.linear.mx]\nrecipe_name = "mxfp8_cublas"' in mx.text
    for q, code in (({"fp8": "tensorwise"}, "torchtitan_fp8_delayed"),
                    ({"fp8": "blockwise"}, "torchtitan_fp8_blockwise")):  # fmt: skip
        refused = export("torchtitan", Scenario(**q))
        assert not refused.ok and refused.code == code


def test_exports_refuse_fp8_on_a_preset_without_it():
    with pytest.raises(ScenarioError) as err:
        export("megatron", Scenario(hardware="a100-80g", fp8="tensorwise"))
    assert err.value.field == "fp8"


# --- the accuracy board ---------------------------------------------------------------------


def test_the_board_predicts_fp8_rows_with_their_sources_recipe():
    fp8_runs = [r for r in RUNS if r.precision == "fp8"]
    predicted = [board.row(r) for r in fp8_runs if r.cp == 1 and r.hardware in HARDWARE]
    assert len(predicted) >= 5 and all(not row.reason for row in predicted)
    for row in predicted:
        s = board.scenario_of(row.run)
        assert s.fp8 == "tensorwise" and row.query["fp8"] == "tensorwise"
        want = "current" if row.run.source.startswith("NVIDIA Megatron-Bridge") else "delayed"
        assert s.fp8_scaling == want, row.run.id
    # No row is left out for FP8 any more: only for what else it needs.
    assert all(board.left_out(r) != "FP8 is not modelled" for r in fp8_runs)
    # A 16-bit row's scenario carries no FP8 field.
    sixteen = next(r for r in RUNS if r.precision == "bf16" and not board.left_out(r))
    assert "fp8" not in board.scenario_of(sixteen).query()


def test_fp8_rows_are_within_20_percent_and_beat_the_flat_estimate():
    """Measured when the rows came in (issue 27): median 6.2%, max 17.6% (NeMo's GPT-3 5B,
    predicted fast), against 51.6% / 61.1% predicted as 16-bit; a guard, not a fit."""
    # The dense FP8 rows; the mixture-of-experts ones are tests/core/test_fidelity_moe.py's.
    rows = [board.row(r) for r in RUNS if r.precision == "fp8" and not r.moe]
    rows = [r for r in rows if not r.reason]
    errors = board.summary([r.error for r in rows])
    assert errors["max_abs"] <= 0.20 and errors["median_abs"] <= 0.10
    assert all(abs(r.error) < abs(r.baseline_error) for r in rows)
