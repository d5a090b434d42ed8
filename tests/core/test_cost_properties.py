"""Invariants of the time model, over many scenarios: faster links or overlap never slow a
step, and splits conserve what they split."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.cost import comm
from app.core.cost.shapes import layers_per_chunk
from app.core.evaluate import prepare
from app.core.inputs.models import MODELS
from app.core.inputs.scenario import Scenario, ScenarioError

scenarios = st.builds(
    dict,
    dp=st.sampled_from([1, 2, 4, 16]),
    tp=st.sampled_from([1, 2, 8, 16]),
    pp=st.sampled_from([1, 2, 4]),
    microbatches=st.sampled_from([4, 8]),
    schedule=st.sampled_from(["1f1b", "gpipe", "zb-h1"]),
    zero=st.sampled_from([0, 1, 3]),
    recompute=st.sampled_from(["none", "selective", "full"]),
    flash_attention=st.booleans(),
    model=st.sampled_from(["megatron-1.7b", "llama3-8b", "gpt3-175b"]),
    hardware=st.sampled_from(["a100-80g", "h100-sxm"]),
)


def step_s(**kw) -> float | None:
    try:
        return prepare(Scenario(**kw))[2].sections["step_time_s"]
    except ScenarioError:
        return None


@settings(max_examples=60, deadline=None)
@given(scenarios, st.sampled_from(["intra_gbps", "inter_gbps"]))
def test_more_bandwidth_never_slows_a_step(kw, link):
    base = step_s(**kw)
    if base is None:
        return
    hw = {"a100-80g": (300.0, 25.0), "h100-sxm": (450.0, 50.0)}[kw["hardware"]]
    doubled = 2 * (hw[0] if link == "intra_gbps" else hw[1])
    assert step_s(**kw, **{link: doubled}) <= base * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(scenarios)
def test_overlap_never_slows_a_step(kw):
    base = step_s(**kw)
    if base is None:
        return
    both = step_s(**kw, overlap_grad_reduce=True, overlap_param_gather=True)
    assert both <= base * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(scenarios)
def test_zero3_costs_more_dp_traffic_with_every_micro_batch(kw):
    kw = kw | {"zero": 3, "dp": max(kw["dp"], 2)}
    if step_s(**kw) is None:
        return
    few = prepare(Scenario(**kw))[2].sections["comm"]["dp_bytes"]
    more = prepare(Scenario(**(kw | {"microbatches": 2 * kw["microbatches"]})))[2]
    assert more.sections["comm"]["dp_bytes"] > few


@given(st.sampled_from(sorted(MODELS)), st.integers(1, 16), st.sampled_from([1, 2]))
def test_uneven_splits_conserve_layers(name, pp, chunks):
    m = MODELS[name]
    if m.layers < pp * chunks or (chunks > 1 and m.layers % (pp * chunks)):
        return
    assert sum(chunks * layers_per_chunk(m, pp, chunks, s) for s in range(pp)) == m.layers


@given(st.integers(2, 4096), st.floats(1e3, 1e10))
def test_a_collective_never_gets_faster_by_leaving_its_domain(n, nbytes):
    from app.core.inputs.hardware import HARDWARE

    hw = replace(HARDWARE["h100-sxm"], nvlink_domain=0)
    inside = comm.Placement(min(n, 8), min(n, 8))
    spread = comm.Placement(min(n, 8), 1)
    assert comm.all_reduce_s(nbytes, spread, hw) >= comm.all_reduce_s(nbytes, inside, hw)
