"""MoE parallel folding (issue 27): the expert tensor-parallel size etp apart from tp, as
Megatron-LM's --expert-tensor-parallel-size (Liu et al. 2025, arXiv 2504.14960).

The expected groups below are worked by hand from Megatron-LM megatron/core/parallel_state.py
(initialize_model_parallel at d98e8a64dd): the expert grid is RankGenerator(tp=etp, ep=ep,
dp=world // (etp * ep * pp), pp=pp, cp=1, order="tp-cp-ep-dp-pp"), whose get_ranks(token)
(generate_masked_orthogonal_rank_groups) varies the masked axes, fastest first, inside each
group. With world 8, order tp-cp-ep-dp-pp, cp = pp = 1:

- tp=2, dp=4, ep=4, etp=1: expert sizes [etp 1, ep 4, edp 2]; rank = e + 4 * d, so the EP
  groups are [0..3] and [4..7] (each spans two dense TP groups, [0,1] and [2,3]), expert-DP
  [0,4], [1,5], [2,6], [3,7], expert-TP singletons.
- tp=4, dp=2, ep=2, etp=2: expert sizes [etp 2, ep 2, edp 2]; rank = t + 2e + 4d: expert-TP
  [0,1], [2,3], ...; EP [0,2], [1,3], [4,6], [5,7]; expert-DP [0,4], [1,5], [2,6], [3,7].
"""

import pytest

from app.core.cost import comm, memory_states, shapes
from app.core.evaluate import evaluate, prepare
from app.core.export import export
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.layout.topology import Layout
from app.core.views.scenario_json import layout_json

MEGATRON_5D = ("tp", "cp", "ep", "dp", "pp")


def _layout(**kw) -> Layout:
    return Layout(order=MEGATRON_5D, gpus_per_node=8, pp=1, **kw)


def test_etp_1_folds_ep_over_the_dense_tp_ranks_as_megatrons_rank_generator():
    lay = _layout(dp=4, tp=2, ep=4, etp=1)
    assert lay.groups("tp") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert lay.groups("ep") == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert lay.groups("edp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert lay.groups("etp") == [[r] for r in range(8)]


def test_etp_between_1_and_tp_has_its_own_expert_tp_groups():
    lay = _layout(dp=2, tp=4, ep=2, etp=2)
    assert lay.groups("etp") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert lay.groups("ep") == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert lay.groups("edp") == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_etp_left_out_is_tp_and_the_grids_are_as_before():
    a, b = _layout(dp=4, tp=2, ep=2), _layout(dp=4, tp=2, ep=2, etp=2)
    for axis in ("tp", "dp", "ep", "etp", "edp"):
        assert a.groups(axis) == b.groups(axis), axis
    assert a.size("etp") == 2 and a.size("edp") == 2  # dp x cp / ep, as before etp existed


QWEN_235B = dict(model="qwen3-235b-a22b", tp=2, pp=8, dp=16, ep=32, etp=1, order="megatron-5d",
                 schedule="interleaved", virtual_stages=4, microbatches=16, hardware="h100-sxm",
                 fp8="tensorwise", fp8_scaling="current")  # fmt: skip


def test_qwen3_235b_tp2_ep32_etp1_on_256_gpus_is_expressible_and_its_ep_leaves_the_node():
    s = Scenario(**QWEN_235B)
    view = evaluate(s)
    assert s.world_size == 256 and view["step_time_s"] > 0
    lay = view["layout"]
    assert lay["sizes"]["ep"] == 32 and lay["crosses_node"]["ep"]
    ep0 = lay["groups"]["ep"][0]
    assert ep0 == list(range(32))  # tp-fastest: the EP group spans both TP ranks of 16 pairs
    with pytest.raises(ScenarioError) as err:  # without folding ep must divide dp x cp
        evaluate(Scenario(**{**QWEN_235B, "etp": None}))
    assert err.value.field == "ep"


@pytest.mark.parametrize(
    ("q", "key"),
    [
        (dict(tp=4, dp=1, ep=4, etp=2), "scenario.etp_divides"),  # 8 does not divide 4
        (dict(tp=2, dp=4, ep=4, etp=1, sequence_parallel=False), "scenario.etp_sp"),
        (dict(tp=2, dp=4, ep=4, etp=3), "scenario.etp_divides"),
    ],
)
def test_an_impossible_etp_is_a_422_naming_etp(q, key):
    s = Scenario(model="mixtral-8x7b", pp=1, order="megatron-5d", **q)
    with pytest.raises(ScenarioError) as err:
        evaluate(s)
    assert err.value.field == "etp" and err.value.key == key


def test_an_expert_width_etp_cannot_split_is_a_422_naming_etp():
    s = Scenario(model="mixtral-8x7b", pp=1, tp=1, dp=8, ep=2, etp=4, expert_ffn=14330,
                 order="megatron-5d")  # fmt: skip
    with pytest.raises(ScenarioError) as err:
        evaluate(s)
    assert err.value.field == "etp" and err.value.key == "scenario.expert_ffn_etp"


def _expert_gemms(s: Scenario) -> list[shapes.Gemm]:
    m, t = specs.model_of(s), specs.training_of(s)
    held = shapes.as_held(m, s.tp, t.vocab_multiple, s.ep)
    gemms = shapes.moe_gemms(held, shapes.rank_tokens(held, t), s.tp, t.expert_tp(s.tp))
    return [g for g in gemms if g.batched]


MIXTRAL = dict(model="mixtral-8x7b", pp=1, tp=4, dp=4, ep=2, order="megatron-5d")


@pytest.mark.parametrize("etp", [1, 2, 4])
def test_expert_gemm_width_scales_with_1_over_etp_at_the_same_flops_per_rank(etp):
    base = _expert_gemms(Scenario(**MIXTRAL, etp=4))  # etp = tp: the unfolded expert GEMMs
    got = _expert_gemms(Scenario(**MIXTRAL, etp=etp))
    # token_dispatcher.py: each TP rank routes tokens/tp, expert TP gathers etp of those.
    w = specs.model_of(Scenario(**MIXTRAL)).moe_width
    (up, down), (up0, down0) = got, base
    assert (up.n, down.k) == (w // etp, w // etp) and (up0.n, down0.k) == (w // 4, w // 4)
    for g, g0 in zip(got, base, strict=True):
        assert g.m == pytest.approx(g0.m * etp / 4)
        assert g.flops == pytest.approx(g0.flops)  # the experts' work still spreads over all


def test_expert_time_at_fixed_rows_scales_with_1_over_etp():
    """Held at the same routed rows, an expert GEMM split over etp takes 1/etp of the
    flops: each rank's slice of every expert is w/etp wide."""
    s = Scenario(**MIXTRAL, etp=1)
    m = shapes.as_held(specs.model_of(s), 1, 1, 2)
    one = [g for g in shapes.moe_gemms(m, 4096, 1, 1) if g.batched]
    two = [g for g in shapes.moe_gemms(m, 4096, 2, 2) if g.batched]  # same rows, etp 2
    for a, b in zip(one, two, strict=True):
        assert a.m == b.m and b.flops == pytest.approx(a.flops / 2)


def test_etp_1_drops_the_expert_tp_collectives_and_routes_each_tp_ranks_own_tokens():
    s1 = Scenario(**MIXTRAL, etp=1)
    s4 = Scenario(**MIXTRAL, etp=4)
    s2 = Scenario(**MIXTRAL, etp=2)
    costs = {}
    for s in (s1, s2, s4):
        layout, _, cost = prepare(s)
        m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
        held = shapes.as_held(m, s.tp, t.vocab_multiple, s.ep)
        costs[s.etp] = (comm.moe_etp_s(held, hw, t, layout), comm.moe_a2a_s(held, hw, t, layout))
    assert costs[1][0] == 0.0 and costs[2][0] > 0 and costs[4][0] > 0
    # Under SP every TP rank dispatches its own tokens/tp: the all-to-all buffer is the
    # same whatever etp (its group differs: ep ranks spaced by etp).
    m, t = specs.model_of(s1), specs.training_of(s1)
    assert comm.moe_a2a_buffer_bytes(m, t, comm.moe_source_split(t, 4)) == pytest.approx(
        comm.moe_a2a_buffer_bytes(m, t) / 4
    )


def _stage(**q) -> dict:
    return evaluate(Scenario(**MIXTRAL, **q))["memory"]["per_stage"][0]


def test_expert_weights_divide_by_etp_times_ep_and_zero_shards_them_over_expert_dp():
    s = Scenario(**MIXTRAL, etp=1)
    m = shapes.as_held(specs.model_of(s), 4, 1, 2)
    experts = m.layers * memory_states.expert_params_per_layer(m)  # experts/ep, whole
    one, four = _stage(etp=1, zero=0), _stage(etp=4, zero=0)
    # bf16 weights: 2 bytes per parameter; etp 1 holds its experts whole, etp 4 a quarter.
    assert one["weights_bytes"] - four["weights_bytes"] == pytest.approx(
        2 * experts * (1 - 1 / 4), rel=1e-6
    )
    # ZeRO-1 shards the optimizer over expert dp = tp*cp*dp/(etp*ep): 8 ranks at etp 1,
    # 2 at etp 4, so each rank keeps the same expert optimizer state either way.
    z1, z4 = _stage(etp=1, zero=1), _stage(etp=4, zero=1)
    assert z1["optimizer_bytes"] == pytest.approx(z4["optimizer_bytes"], rel=1e-6)


def test_the_layout_json_shows_the_expert_tp_groups_only_where_etp_differs():
    lay = layout_json(_layout(dp=4, tp=2, ep=4, etp=1))
    assert lay["groups"]["ep"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert lay["sizes"]["etp"] == 1 and lay["groups"]["etp"] == [[r] for r in range(8)]
    same = layout_json(_layout(dp=4, tp=2, ep=2))
    assert "etp" not in same["sizes"] and "etp" not in same["groups"]
    # pages.py rebuilds the Layout from the sizes: etp must come back as it went.
    assert Layout(**lay["sizes"], order=MEGATRON_5D).groups("ep") == lay["groups"]["ep"]


def test_the_megatron_export_spells_the_expert_tp_size():
    text = export("megatron", Scenario(**MIXTRAL, etp=1)).text
    assert "--expert-tensor-parallel-size 1" in text
    assert "--expert-tensor-parallel-size" not in export("megatron", Scenario(**MIXTRAL)).text


@pytest.mark.parametrize(("etp", "ok"), [(1, True), (4, True), (2, False), (None, True)])
def test_torchtitan_runs_expert_tp_only_at_1_or_tp(etp, ok):
    e = export("torchtitan", Scenario(**MIXTRAL, etp=etp, zero=2))
    if ok:
        assert f"expert_tensor_parallel_degree = {etp or 4}" in e.text
    else:
        assert e.code == "torchtitan_etp" and "ETP" not in e.reason and "etp" in e.reason


@pytest.mark.parametrize(
    ("model", "sp", "per_pass"),
    [("qwen3-30b-a3b", True, 1.0), ("mixtral-8x7b", True, 1.0), ("deepseek-v3", True, 2.0),
     ("llama3-8b", True, 2.0), ("qwen3-30b-a3b", False, 2.0)],
)  # fmt: skip
def test_a_moe_layer_keeps_only_attentions_tp_collective_unless_it_has_shared_experts(
    model, sp, per_pass
):
    """Megatron's MoE layer takes and gives back sequence-parallel shards: its experts gather
    over expert TP (moe_etp_s), only shared experts gather over TP; Qwen3 and Mixtral have
    MoE in every layer, DeepSeek-V3 a shared expert."""
    from app.core.cost import durations

    s = Scenario(model=model, tp=2, pp=1, dp=4, sequence_parallel=sp)
    m, t = specs.model_of(s), specs.training_of(s)
    assert durations.tp_collectives(m, t) == per_pass


def test_the_order_table_folds_ep_over_tp_ranks_when_etp_is_below_tp():
    # ep = 32 exceeds dp x cp = 16: only etp = 1 folds it (over tp x dp = 32), and the
    # overview's order table must then list orders, not none (it listed none before).
    from app.core.layout import orders

    assert orders.compare(dp=16, tp=2, pp=8, gpus_per_node=8, ep=32) == []
    rows = orders.compare(dp=16, tp=2, pp=8, gpus_per_node=8, ep=32, etp=1)
    megatron = next(r for r in rows if "megatron-5d" in r["presets"])
    assert megatron["order"] == "tp-ep-dp-pp" and megatron["nodes_spanned"]["ep"] == 4
    lay = {"sizes": {"dp": 16, "tp": 2, "pp": 8, "ep": 32, "etp": 1}, "gpus_per_node": 8}
    assert orders.of_layout(lay) == rows
