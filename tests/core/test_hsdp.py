"""HSDP (issue 27's FSDP2 variant): ZeRO-3 sharded within groups of dp_shard data-parallel
ranks, replicated across them. Memory divides by the shard group, the gathers and
reduce-scatters run on it, and each gradient shard is all-reduced over the replicas; with
dp_shard = dp it is plain FSDP, number for number."""

import pytest

from app.core.cost import comm, step
from app.core.evaluate import evaluate, prepare
from app.core.export import export
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario, ScenarioError

tomllib = pytest.importorskip("tomllib")
BASE = dict(model="llama3-8b", dp=16, tp=1, pp=1, zero=3, microbatches=4, gpus_per_node=8)


def _eval(**q):
    return evaluate(Scenario(**{**BASE, **q}), lean=True)


def test_dp_shard_equal_to_dp_is_plain_fsdp():
    same, plain = _eval(dp_shard=16), _eval()
    for key in ("scenario", "query"):  # the link says dp_shard; nothing else may differ
        same.pop(key), plain.pop(key)
    assert same == plain


@pytest.mark.parametrize("shard", [2, 4, 8])
def test_states_divide_by_the_shard_group_not_by_dp(shard):
    hsdp = _eval(dp_shard=shard)["memory"]["per_stage"][0]
    plain = evaluate(Scenario(**{**BASE, "dp": shard}), lean=True)["memory"]["per_stage"][0]
    for key in ("weights_bytes", "grads_bytes", "optimizer_bytes"):
        assert hsdp[key] == pytest.approx(plain[key]), key
    assert hsdp["optimizer_bytes"] > _eval()["memory"]["per_stage"][0]["optimizer_bytes"]


def test_the_groups_are_a_node_block_and_one_rank_of_each():
    s = Scenario(**BASE, dp_shard=8)
    layout, _, cost = prepare(s)
    inner = comm.shard_placement(layout, 8, 8)
    assert (inner.size, inner.domains) == (8, 1)  # one 8-GPU node: NVLink
    outer = comm.replica_placement(layout, 8, 8)
    assert (outer.size, outer.domains) == (2, 2)  # one rank on each node
    # The gradient sync: reduce-scatter in the node, then the shard all-reduced across.
    t, hw = cost.training, specs.hardware_of(s)
    grads = 1e9
    got = step.grad_sync_s(int(grads / t.grad_bytes), t, layout, hw, layers=32)
    rs = comm.all_gather_s(grads, inner, hw, messages=32, sharded=True)
    ar = comm.all_reduce_s(grads / 8, outer, hw, messages=32)
    assert got == pytest.approx(rs + ar)


def test_bytes_per_step_add_the_replica_all_reduce():
    plain8 = evaluate(Scenario(**{**BASE, "dp": 8}), lean=True)["comm"]["dp_bytes"]
    hsdp = _eval(dp_shard=8)
    rank_params = hsdp["memory"]["per_stage"][0]["params"]
    grad = rank_params * 2  # bf16 gradients on the wire
    # 2 replicas: the shard's all-reduce moves 2(n-1)/n = 1x its grad/8 bytes.
    assert hsdp["comm"]["dp_bytes"] == pytest.approx(plain8 + grad / 8)


def test_shard_groups_inside_a_node_speed_up_a_multi_node_fsdp():
    q = dict(model="llama3-70b", dp=64, tp=1, pp=1, zero=3, hardware="h100-sxm", gpus_per_node=8)
    plain = evaluate(Scenario(**q), lean=True)
    hsdp = evaluate(Scenario(**q, dp_shard=8), lean=True)
    assert hsdp["step_time_s"] < plain["step_time_s"]


@pytest.mark.parametrize(
    ("q", "words"),
    [({"dp_shard": 3}, "must divide dp = 16"), ({"dp_shard": 4, "zero": 1}, "needs zero=3")],
)
def test_bad_shard_groups_are_refused_naming_dp_shard(q, words):
    with pytest.raises(ScenarioError) as err:
        _eval(**q)
    assert err.value.field == "dp_shard" and words in err.value.reason


def test_torchtitan_gets_shard_and_replicate_degrees_and_megatron_refuses():
    s = Scenario(**{**BASE, "dp_shard": 4})
    e = export("torchtitan", s)
    assert e.ok, e.reason
    par = tomllib.loads(e.text)["parallelism"]
    assert (par["data_parallel_shard_degree"], par["data_parallel_replicate_degree"]) == (4, 4)
    m = export("megatron", s)
    assert not m.ok and "HSDP" in m.reason
