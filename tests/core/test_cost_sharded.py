"""ZeRO-3 / FSDP communication: gathers and reduce-scatters at one NIC share per GPU across
nodes, one link for both, per-tensor gathers, fp32 gradient reduction."""

from dataclasses import replace

import pytest

from app.core.cost import comm, step
from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario
from app.core.inputs.training import Training
from app.core.layout.topology import Layout

HW = HARDWARE["a100-80g"]
BASE = dict(model="gpt3-175b", dp=64, tp=1, pp=1, microbatches=1, zero=3, hardware="a100-80g")


def view(**kw) -> dict:
    return evaluate(Scenario(**{**BASE, **kw}))


def test_a_sharded_collective_across_nodes_runs_at_its_gpus_own_nic_share():
    spans = comm.Placement(size=16, per_domain=8)  # two full nodes
    one_nic = HW.inter_gbps * 1e9 * HW.efficiency.inter_busbw_fraction
    assert comm.bus_bandwidth_bps(spans, HW, sharded=True) == pytest.approx(one_nic)
    assert comm.bus_bandwidth_bps(spans, HW) == pytest.approx(8 * one_nic)
    nbytes = 1e10
    gap = comm.all_gather_s(nbytes, spans, HW, sharded=True) - comm.all_gather_s(nbytes, spans, HW)
    assert gap == pytest.approx(15 / 16 * nbytes * (1 / one_nic - 1 / (8 * one_nic)))


def test_inside_one_node_sharding_changes_nothing():
    inside = comm.Placement(size=8, per_domain=8)
    assert comm.all_gather_s(1e9, inside, HW, sharded=True) == comm.all_gather_s(1e9, inside, HW)


def test_a_comm_bound_zero3_step_carries_every_transfer_of_the_dp_link_in_turn():
    # One micro-batch per GPU: weights gathered for the forward and the backward, gradients
    # reduce-scattered; over one link they cannot overlap one another, only the compute.
    v = view(dp=1536)
    layout = Layout(dp=1536, tp=1, pp=1, gpus_per_node=8)
    place = comm.placement(layout, "dp", HW.domain_size)
    psi = v["compute"]["params_total"]
    one_pass = comm.all_gather_s(psi * 2, place, HW, messages=96, sharded=True)
    assert v["step_time_s"] >= 3 * one_pass


def test_prefetch_never_slows_a_zero3_step_and_hides_something():
    for dp in (64, 384, 1536):
        on, off = view(dp=dp, overlap_param_gather=True), view(dp=dp)
        assert on["step_time_s"] <= off["step_time_s"] * (1 + 1e-12)
    assert view(dp=64, overlap_param_gather=True)["step_time_s"] < view(dp=64)["step_time_s"]


def test_the_backwards_gathers_shrink_the_window_that_hides_the_reduce_scatter():
    t = Training(zero=3, overlap_grad_reduce=True, overlap_param_gather=True)
    layout = Layout(dp=64, tp=1, pp=1, gpus_per_node=8)
    busy = step.backward_gather_s(10**9, t, layout, HW, messages=10)
    assert busy > 0
    assert step.backward_gather_s(10**9, replace(t, zero=1), layout, HW) == 0.0


def test_per_tensor_gathers_pay_more_latency_and_nothing_else():
    per_layer, per_tensor = view(), view(zero3_per_tensor=True)
    assert per_tensor["step_time_s"] > per_layer["step_time_s"]
    assert per_tensor["comm"]["dp_bytes"] == per_layer["comm"]["dp_bytes"]


def test_fp32_gradient_reduction_doubles_bf16_gradient_bytes():
    for zero in (0, 3):
        kw = dict(zero=zero, model="llama3-8b", dp=16)
        bf16, fp32 = view(**kw), view(grad_reduce_fp32=True, **kw)
        if zero == 0:  # all-reduce: only gradients move
            assert fp32["comm"]["dp_bytes"] == pytest.approx(2 * bf16["comm"]["dp_bytes"])
        else:  # the weight gathers stay bf16; the reduce-scatter doubles
            assert fp32["comm"]["dp_bytes"] > bf16["comm"]["dp_bytes"]
        assert fp32["breakdown"]["dp_total_s"] > bf16["breakdown"]["dp_total_s"]
