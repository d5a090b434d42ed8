"""calibrate's fits on synthetic timings with known answers: each fit recovers the constants
the timings were made from, and the whole profile round-trips through the cost model."""

from dataclasses import replace

import pytest

from app.core.cost import comm, compute, durations
from app.core.cost.shapes import Gemm
from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.layout.topology import Layout
from gpu_probe.calibrate_fit import (
    LinkSample,
    fit_gemm,
    fit_links,
    kernel_overhead_us,
    link_seconds,
    relative_least_squares,
)
from gpu_probe.calibrate_profile import (
    AttentionTiming,
    BlockTiming,
    Measurements,
    OptimizerTiming,
    block_compute_s,
    block_model,
    block_training,
    profile_from,
    spec_from,
)

# A made-up CPU box: 80 GFLOP/s GEMMs that reach half of it at 0.5 MFLOP, 12 GB/s memory,
# 1.5 GB/s links with 90 us per step, 20 us per kernel launch.
TRUE = HardwareSpec(
    "truth", peak_tflops=0.08, hbm_gib=8.0, hbm_tbps=0.012, intra_gbps=1.5, inter_gbps=0.4,
    gpus_per_node=4, nics_per_node=4, source="synthetic",
    efficiency=Efficiency(
        gemm_max_fraction=1.0, gemm_half_gflop=5e-4, flash_fraction=0.3, hbm_fraction=1.0,
        intra_busbw_fraction=1.0, inter_busbw_fraction=1.0, intra_latency_us=90.0,
        inter_latency_us=400.0, kernel_overhead_us=20.0,
    ),
)  # fmt: skip
SIZES = [4096 * 4**i for i in range(6)]
SHAPES = [(16, s, s) for s in (32, 64, 128, 256, 512)] + [(s, s, s) for s in (64, 256, 1024)]


def _compute_bound(hw: HardwareSpec) -> HardwareSpec:
    # GEMM timings made on the curve alone: memory far faster, so the roofline never binds.
    return replace(hw, hbm_tbps=100.0)


def _gemm_s(m: int, n: int, k: int, hw: HardwareSpec = TRUE) -> float:
    return compute.gemm_seconds(Gemm(m, n, k), _compute_bound(hw), 4)


def _intra_samples(n: int) -> list[LinkSample]:
    inside = comm.Placement(n, n)
    out = []
    for b in SIZES:
        out.append(LinkSample("all_reduce", n, b, comm.all_reduce_s(b, inside, TRUE)))
        out.append(LinkSample("all_gather", n, b, comm.all_gather_s(b, inside, TRUE)))
        out.append(LinkSample("p2p", 2, b, comm.p2p_s(b, False, TRUE)))
    return out


def test_relative_least_squares_recovers_a_noise_free_line():
    rows = [(1.0, x) for x in (1.0, 10.0, 100.0, 1000.0)]
    targets = [3.0 + 0.5 * x for _, x in rows]
    a, b = relative_least_squares(rows, targets)
    assert a == pytest.approx(3.0, rel=1e-9) and b == pytest.approx(0.5, rel=1e-9)


def test_relative_least_squares_keeps_theta_non_negative():
    # Times that fall with size would want a negative slope: the fit puts it at zero.
    rows = [(1.0, x) for x in (1.0, 2.0, 3.0)]
    a, b = relative_least_squares(rows, [3.0, 2.0, 1.0])
    assert b == 0.0 and a > 0


def test_relative_least_squares_refuses_non_positive_times():
    with pytest.raises(ValueError, match="positive"):
        relative_least_squares([(1.0, 1.0)], [0.0])


def test_gemm_fit_recovers_the_efficiency_curve():
    flops = [2.0 * m * n * k for m, n, k in SHAPES]
    fit = fit_gemm(flops, [_gemm_s(*s) for s in SHAPES])
    e = TRUE.efficiency
    # Only peak x max_fraction is identifiable; with max_fraction 1 both come back.
    assert fit.peak_tflops == pytest.approx(TRUE.peak_tflops * e.gemm_max_fraction, rel=1e-9)
    assert fit.half_gflop == pytest.approx(e.gemm_half_gflop, rel=1e-9)
    assert fit.seconds(flops[0]) == pytest.approx(_gemm_s(*SHAPES[0]), rel=1e-9)


def test_gemm_fit_refuses_times_that_do_not_grow():
    with pytest.raises(ValueError, match="larger sizes"):
        fit_gemm([1e6, 1e7, 1e8], [3.0, 2.0, 1.0])


@pytest.mark.parametrize("n", [2, 4, 8])
def test_link_fit_recovers_latency_and_bandwidth_inside_a_node(n):
    samples = _intra_samples(n)
    fit = fit_links(samples)
    assert fit.latency_us == pytest.approx(TRUE.efficiency.intra_latency_us, rel=1e-9)
    assert fit.gbps == pytest.approx(TRUE.intra_gbps, rel=1e-9)
    for s in samples:
        assert link_seconds(s, fit) == pytest.approx(s.seconds, rel=1e-9)


def test_link_fit_recovers_the_network_for_one_rank_per_node():
    nodes = 4
    across = comm.Placement(nodes, 1)  # a DP group of one member per node
    samples = []
    for b in SIZES:
        samples.append(LinkSample("all_reduce", nodes, b, comm.all_reduce_s(b, across, TRUE)))
        samples.append(LinkSample("all_gather", nodes, b, comm.all_gather_s(b, across, TRUE)))
        samples.append(LinkSample("p2p", 2, b, comm.p2p_s(b, True, TRUE)))
    fit = fit_links(samples, across_nodes=True, intra_latency_us=TRUE.efficiency.intra_latency_us)
    assert fit.latency_us == pytest.approx(TRUE.efficiency.inter_latency_us, rel=1e-9)
    assert fit.gbps == pytest.approx(TRUE.inter_gbps, rel=1e-9)


def test_link_times_flat_in_bytes_bound_the_bandwidth_by_the_largest_message():
    # Pure latency, 1 ms whatever the size: the slope is unidentified, so the bandwidth is
    # the lowest the largest message allows (all its time taken as transfer), never infinite.
    samples = [LinkSample("p2p", 2, b, 1e-3) for b in SIZES]
    fit = fit_links(samples)
    assert fit.gbps == pytest.approx(SIZES[-1] / 1e-3 / 1e9, rel=1e-9)
    assert fit.latency_us == pytest.approx(1000.0, rel=1e-9)


def test_kernel_overhead_is_the_excess_over_the_model_per_launch():
    assert kernel_overhead_us(measured_s=5e-3, bare_s=1e-3, per_us_s=2e-4) == pytest.approx(20.0)
    assert kernel_overhead_us(measured_s=1e-3, bare_s=2e-3, per_us_s=2e-4) == 0.0
    with pytest.raises(ValueError):
        kernel_overhead_us(1e-3, 0.0, 0.0)


def _measurements(hw: HardwareSpec) -> Measurements:
    """What a perfect calibrate run on ``hw`` would measure, each figure from the cost model."""
    gemms = tuple((m, n, k, _gemm_s(m, n, k, hw)) for m, n, k in SHAPES)
    attn = AttentionTiming(256, 4, 512, 0.0)
    bare = replace(hw, efficiency=replace(hw.efficiency, kernel_overhead_us=0.0))
    m = block_model(attn.hidden, attn.heads, attn.seq_len)
    forward, _ = compute.attention_seconds(m, bare, block_training("fp32"), 1)
    block = BlockTiming(32, 2, 8, 0.0)
    block_s = block_compute_s(block, _compute_bound(hw), "fp32", hw.efficiency.kernel_overhead_us)
    stream_bytes = 3 * 4 * (16 << 20)
    return Measurements(
        host="synthetic", date="2026-01-01", device="cpu", backend="gloo", dtype="fp32",
        world=4, ranks_per_node=4, memory_gib=hw.hbm_gib, gemms=gemms,
        stream_bytes=stream_bytes, stream_s=stream_bytes / (hw.hbm_tbps * 1e12),
        attention=replace(attn, seconds=forward), block=replace(block, seconds=block_s),
        intra=tuple(_intra_samples(4)),
    )  # fmt: skip


def test_the_profile_round_trips_every_constant_through_the_cost_model():
    hw = _compute_bound(TRUE)  # so the block's GEMMs, too, sit on the curve alone
    got = spec_from(_measurements(hw), "round-trip")
    e, want = got.efficiency, hw.efficiency
    assert got.peak_tflops == pytest.approx(hw.peak_tflops, rel=1e-6)
    assert got.hbm_tbps == pytest.approx(hw.hbm_tbps, rel=1e-9)
    assert got.intra_gbps == pytest.approx(hw.intra_gbps, rel=1e-6)
    for name in ("gemm_half_gflop", "flash_fraction", "intra_latency_us", "kernel_overhead_us"):
        assert getattr(e, name) == pytest.approx(getattr(want, name), rel=1e-6), name
    # One node measured no network: inter_* say so by copying intra_*.
    assert (got.inter_gbps, e.inter_latency_us) == (got.intra_gbps, e.intra_latency_us)
    # And the fitted spec times the block as it was measured.
    block = _measurements(hw).block
    assert block_compute_s(block, got, "fp32", e.kernel_overhead_us) == pytest.approx(
        block.seconds, rel=1e-6
    )


def test_a_profile_from_measurements_validates_and_names_its_source():
    profile = profile_from(_measurements(_compute_bound(TRUE)), "cal-test", nics_per_node=2)
    assert profile.name == "cal-test" and profile.nics_per_node == 2
    assert "meshscope calibrate" in profile.source and "dtype=fp32" in profile.source
    assert profile.to_spec().efficiency.kernel_overhead_us == pytest.approx(20.0, rel=1e-6)


def test_presets_charge_no_kernel_launches():
    # Published-run fidelity was fitted without host overhead: a preset's layer is unchanged.
    hw = HardwareSpec("h", 989.0, 80.0, 3.35, 450.0, 50.0)
    layout = Layout(1, 1, 1, ("tp", "pp", "dp"), 1)
    m, t = block_model(4096, 32, 2048), block_training("bf16")
    at_zero = durations.layer_cost(m, hw, t, layout)
    with_launches = replace(hw, efficiency=replace(hw.efficiency, kernel_overhead_us=10.0))
    assert hw.efficiency.kernel_overhead_us == 0.0
    assert durations.layer_cost(m, with_launches, t, layout).f > at_zero.f


def test_p2p_gets_its_own_latency_and_collectives_keep_theirs():
    # gloo on a loaded box: a p2p message pays 300 us where a ring step pays 90.
    hw = _compute_bound(replace(TRUE, efficiency=replace(TRUE.efficiency, p2p_latency_us=300.0)))
    meas = _measurements(hw)
    samples = [
        LinkSample(s.op, s.group_size, s.nbytes, comm.p2p_s(s.nbytes, False, hw))
        if s.op == "p2p" else s
        for s in meas.intra
    ]  # fmt: skip
    got = spec_from(replace(meas, intra=tuple(samples)), "p2p").efficiency
    assert got.p2p_latency_us == pytest.approx(300.0, rel=1e-6)
    assert got.intra_latency_us == pytest.approx(90.0, rel=1e-6)
    assert comm.p2p_s(1 << 20, False, replace(hw, efficiency=got)) == pytest.approx(
        comm.p2p_s(1 << 20, False, hw), rel=1e-6
    )


def test_the_optimizer_s_per_tensor_host_time_is_read_back_from_its_step():
    fitted = spec_from(_measurements(TRUE), "fitted")  # the spec the rest of the fit gives
    per_tensor = replace(fitted, efficiency=replace(fitted.efficiency, optimizer_tensor_us=7.5))
    params, tensors = 4 * 12_352, 40
    modelled = compute.optimizer_seconds(params, block_training("fp32"), 1, per_tensor, tensors)
    meas = replace(_measurements(TRUE), optimizer=OptimizerTiming(params, tensors, modelled))
    got = spec_from(meas, "optimizer").efficiency
    assert got.optimizer_tensor_us == pytest.approx(7.5, rel=1e-6)
    # Not measured (an older raw file), or a step no slower than its bytes: 0, never negative.
    assert spec_from(_measurements(TRUE), "none").efficiency.optimizer_tensor_us == 0.0
    fast = replace(meas, optimizer=OptimizerTiming(params, tensors, 0.0))
    assert spec_from(fast, "fast").efficiency.optimizer_tensor_us == 0.0


def test_a_one_tensor_at_a_time_optimizer_costs_its_tensors_and_presets_pay_nothing():
    t = block_training("fp32")
    base = compute.optimizer_seconds(10**6, t, 1, TRUE)
    per = replace(TRUE, efficiency=replace(TRUE.efficiency, optimizer_tensor_us=5.0))
    assert compute.optimizer_seconds(10**6, t, 1, per, 40) == pytest.approx(base + 40 * 5e-6)
    for hw in HARDWARE.values():  # multi-tensor (fused / foreach) Adam: no per-tensor term
        assert hw.efficiency.optimizer_tensor_us == 0.0


def test_the_block_as_a_step_runs_it_sets_the_launch_overhead_when_measured():
    # The back-to-back block ran faster than the one timed between messages (a step's way):
    # the kernel overhead comes from the latter; without it, from the former.
    hw = _compute_bound(TRUE)
    meas = _measurements(hw)
    hot = replace(meas.block, seconds=0.5 * meas.block.seconds)
    in_step = replace(meas, block=hot, block_in_step=meas.block)
    assert spec_from(in_step, "s").efficiency.kernel_overhead_us == pytest.approx(20.0, rel=1e-6)
    assert spec_from(replace(meas, block=hot), "h").efficiency.kernel_overhead_us < 15.0
