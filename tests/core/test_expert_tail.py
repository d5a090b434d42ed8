"""A mixture of experts' step tail (issue 27): the routed experts' gradients are reduced, and
their optimizer states sharded, over the expert-data-parallel group at 1/etp of each expert,
as Megatron-LM's DDP gives expert parameters buffers of their own over
get_expert_data_parallel_group(); the dense weights keep dp x cp at 1/tp.

Worked example (tests/core/test_etp_folding.py's grids): world 8, order tp-cp-ep-dp-pp,
tp=4, dp=2, ep=2. With etp = tp the expert-DP size is 4 x 2 / (4 x 2) = 1: every expert
shard lives on one rank, so nothing of the experts is reduced. With etp = 1 it is
4 x 2 / (1 x 2) = 4, and each rank holds its experts whole (4x what 1/tp counts).
"""

import math

import pytest

from app.core.cost import comm, compute, expert_tail, fp8, overlap, shapes, step
from app.core.cost.fp8 import WEIGHT_CACHE_BYTES
from app.core.cost.memory_states import expert_params_per_layer
from app.core.evaluate import evaluate
from app.core.inputs import specs
from app.core.inputs.presets import HARDWARE
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.layout.topology import Layout

MEGATRON_5D = ("tp", "cp", "ep", "dp", "pp")
HW = HARDWARE["h100-sxm"]


def _parts(etp: int | None, zero: int = 1, **kw):
    s = Scenario(model="mixtral-8x7b", tp=4, pp=1, dp=2, ep=2, etp=etp, order="megatron-5d",
                 hardware="h100-sxm", microbatches=4, zero=zero, **kw)  # fmt: skip
    t = specs.training_of(s)
    m = shapes.as_held(specs.model_of(s), s.tp, t.vocab_multiple, s.ep)
    lay = Layout(dp=2, tp=4, pp=1, order=MEGATRON_5D, ep=2, etp=etp)
    return s, t, m, lay


def test_the_share_counts_experts_at_1_over_tp_and_holds_them_at_1_over_etp():
    _, _, m, lay = _parts(etp=1)
    routed = 32 * expert_params_per_layer(m)
    ex = expert_tail.share(m, lay, [10**10], [[32]])
    assert ex.counted == int(routed // 4) and ex.held == int(routed // 1)
    assert ex.edp == 4 == len(lay.group("edp", 0))
    assert (
        expert_tail.share(m, Layout(dp=2, tp=4, pp=1, order=MEGATRON_5D, ep=2), [1], [[32]]).edp
        == 1
    )


def test_the_expert_sync_is_an_all_reduce_over_the_expert_data_parallel_group():
    _, t, m, lay = _parts(etp=1)
    ex = expert_tail.share(m, lay, [10**10], [[32]])
    place = comm.placement(lay, "edp", HW.domain_size)
    buckets = math.ceil(ex.held / overlap.BUCKET_PARAMS)
    want = comm.all_reduce_s(ex.held * t.grad_bytes, place, HW, buckets)
    assert expert_tail.sync_s(ex, t, lay, HW) == pytest.approx(want) and want > 0


def test_zero3_reduce_scatters_the_expert_gradients_over_the_same_group():
    _, t, m, lay = _parts(etp=1, zero=3)
    ex = expert_tail.share(m, lay, [10**10], [[32]])
    place = comm.placement(lay, "edp", HW.domain_size)
    buckets = math.ceil(ex.held / overlap.BUCKET_PARAMS)
    want = comm.all_gather_s(ex.held * t.grad_bytes, place, HW, messages=buckets, sharded=True)
    assert expert_tail.sync_s(ex, t, lay, HW) == pytest.approx(want)


def test_the_tail_is_the_dense_sync_plus_the_expert_sync_and_the_optimizer_shards_by_edp():
    _, t, m, lay = _parts(etp=1)
    rank_params = 25 * 10**9
    ex = expert_tail.share(m, lay, [rank_params], [[32]])
    d = step.Durations(f=0.01, b=0.02, w=0.0)
    tail = step.tail(rank_params, t, lay, HW, [d], 1, experts=ex)
    dense = rank_params - ex.counted
    want = step.grad_sync_s(dense, t, lay, HW) + expert_tail.sync_s(ex, t, lay, HW)
    assert tail.dp_total_s == pytest.approx(want)
    # ZeRO-1: the dense states over dp x cp = 2, the experts' over edp = 4.
    shards = comm.shard_ranks(lay, t)
    stepped = dense + ex.held * shards / ex.edp
    assert tail.optim_s == pytest.approx(compute.optimizer_seconds(stepped, t, shards, HW, 0))
    assert stepped / shards == pytest.approx(dense / 2 + ex.held / 4)


def test_a_dense_model_has_no_share_and_its_tail_is_as_before():
    s = Scenario(model="gpt3-1.3b", tp=2, pp=1, dp=4)
    t = specs.training_of(s)
    m = shapes.as_held(specs.model_of(s), 2, t.vocab_multiple)
    lay = Layout(dp=4, tp=2, pp=1)
    ex = expert_tail.share(m, lay, [10**9], [[24]])
    assert ex == expert_tail.ExpertShare(0, 0, 1)
    d = step.Durations(f=0.01, b=0.02, w=0.0)
    assert step.tail(10**9, t, lay, HW, [d], 1, experts=ex) == step.tail(10**9, t, lay, HW, [d], 1)


def test_etp_equal_to_tp_with_edp_1_syncs_no_expert_bytes_on_the_page():
    # tp=4, dp=2, ep=2: edp = 1, so only the dense weights are all-reduced over dp = 2.
    default = evaluate(_parts(etp=None)[0])
    folded = evaluate(_parts(etp=1)[0])
    assert folded["comm"]["dp_bytes"] > 10 * default["comm"]["dp_bytes"]
    assert folded["breakdown"]["dp_total_s"] > default["breakdown"]["dp_total_s"]
    # ZeRO-1: each rank steps held / edp = (4 x counted) / 4 expert parameters either way.
    assert folded["breakdown"]["optimizer_s"] == pytest.approx(default["breakdown"]["optimizer_s"])
    # Without ZeRO every rank steps what it holds: four times the experts at etp = 1.
    plain = [evaluate(_parts(etp=e, zero=0)[0])["breakdown"]["optimizer_s"] for e in (None, 1)]
    assert plain[1] > 2 * plain[0]


def test_the_fp8_weight_cache_splits_routed_experts_over_etp():
    _, t, m, _ = _parts(etp=1, fp8="tensorwise")
    t4 = specs.training_of(_parts(etp=None, fp8="tensorwise")[0])
    routed = expert_params_per_layer(m)
    extra = fp8.weight_cache_bytes(m, t, 4, 32) - fp8.weight_cache_bytes(m, t4, 4, 32)
    assert extra == pytest.approx(32 * routed * (1 - 1 / 4) * WEIGHT_CACHE_BYTES)


@pytest.mark.parametrize(("kw", "field"), [({"ep": 2}, "ep"), ({"etp": 1}, "etp")])
def test_expert_axes_on_a_dense_model_are_refused_naming_the_field(kw, field):
    s = Scenario(model="gpt3-1.3b", tp=2, pp=2, dp=2, order="megatron-5d", **kw)
    with pytest.raises(ScenarioError) as err:
        evaluate(s)
    assert (err.value.field, err.value.key) == (field, "scenario.ep_dense")
    # etp equal to tp is the default, so a dense model takes it.
    assert evaluate(Scenario(model="gpt3-1.3b", tp=2, pp=2, dp=2, etp=2))["step_time_s"] > 0
