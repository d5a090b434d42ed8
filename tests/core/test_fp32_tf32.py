"""fp32 GEMMs run at the datasheet's dense TF32 rate, half the 16-bit one on every preset
GPU: an fp32 step is slower than bf16, and the advice's mixed-precision what-if saves time."""

from __future__ import annotations

import pytest

from app.core.cost.compute import gemm_seconds
from app.core.cost.shapes import Gemm
from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.hardware_profile import parse_profile, profile_of
from app.core.inputs.scenario import Scenario

BIG = Gemm(8192, 8192, 8192, 1)


@pytest.mark.parametrize("name", sorted(HARDWARE))
def test_every_preset_states_tf32_at_half_its_16_bit_peak(name):
    hw = HARDWARE[name]
    assert hw.fp32_tflops == pytest.approx(hw.peak_tflops / 2, rel=0.02)
    assert hw.matmul_tflops(4) == hw.fp32_tflops and hw.matmul_tflops(2) == hw.peak_tflops


def test_a_compute_bound_fp32_gemm_takes_twice_the_bf16_one():
    hw = HARDWARE["a100-80g"]
    assert gemm_seconds(BIG, hw, 4) == pytest.approx(2 * gemm_seconds(BIG, hw, 2), rel=1e-9)


def test_an_fp32_step_is_slower_than_bf16():
    kw = {"model": "llama3-8b", "tp": 2, "pp": 2, "dp": 2, "hardware": "h100-sxm"}
    fp32 = evaluate(Scenario(**kw, dtype="fp32"))["step_time_s"]
    bf16 = evaluate(Scenario(**kw, dtype="bf16"))["step_time_s"]
    assert fp32 > 1.5 * bf16


def test_a_profile_without_a_tf32_figure_runs_fp32_at_its_peak():
    # A calibrated CPU profile measured its GEMMs in fp32: that is its peak.
    text = profile_of(HARDWARE["a100-80g"]).model_copy(update={"fp32_tflops": 0.0, "name": "x"})
    hw = parse_profile(text.model_dump_json()).to_spec()
    assert hw.matmul_tflops(4) == hw.peak_tflops


def test_a_peak_override_keeps_the_tf32_ratio():
    s = Scenario(model="llama3-8b", hardware="a100-80g", peak_tflops=624.0, dtype="fp32")
    from app.core.inputs.specs import hardware_of

    assert hardware_of(s).fp32_tflops == pytest.approx(312.0)
