"""The cost model's arithmetic against the papers' closed forms and hand calculations."""

import pytest

from app.core import costs, costs_time
from app.core.costs import Training
from app.core.presets import HARDWARE, MODELS, ModelSpec
from app.core.topology import Layout

TABLE1_PARAMS_B = {  # Narayanan et al. 2021 Table 1, billions
    "megatron-1.7b": 1.7, "megatron-3.6b": 3.6, "megatron-7.5b": 7.5, "megatron-18b": 18.4,
    "megatron-39b": 39.1, "megatron-76b": 76.1, "megatron-145b": 145.6, "megatron-310b": 310.1,
    "megatron-530b": 529.6, "megatron-1t": 1008.0,
}  # fmt: skip


@pytest.mark.parametrize("name,billions", TABLE1_PARAMS_B.items())
def test_parameter_counts_match_megatron_table_1(name, billions):
    assert costs.total_params(MODELS[name]) / 1e9 == pytest.approx(billions, rel=0.03)


def test_parameter_formula_is_narayanans_closed_form():
    m = MODELS["gpt3-175b"]
    nl, h, v, s = m.layers, m.hidden, m.vocab, m.seq_len
    closed = 12 * nl * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * nl * h))
    assert costs.total_params(m) == pytest.approx(closed, rel=1e-4)


@pytest.mark.parametrize("name", ["llama3-8b", "llama3-70b", "llama3-405b"])
def test_llama3_sizes_match_their_names(name):
    expected = {"llama3-8b": 8.03, "llama3-70b": 70.6, "llama3-405b": 405.9}[name]
    assert costs.total_params(MODELS[name]) / 1e9 == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("name", ["megatron-1.7b", "gpt3-175b", "megatron-1t"])
def test_flops_are_equation_3_exactly(name):
    m, batch = MODELS[name], 1536
    nl, h, v, s = m.layers, m.hidden, m.vocab, m.seq_len
    eq3_recompute = 96 * batch * s * nl * h**2 * (1 + s / (6 * h) + v / (16 * nl * h))
    eq3_model = 72 * batch * s * nl * h**2 * (1 + s / (6 * h) + v / (12 * nl * h))
    assert costs.hardware_flops(m, batch, "full") == pytest.approx(eq3_recompute, rel=1e-12)
    assert costs.model_flops(m, batch) == pytest.approx(eq3_model, rel=1e-12)


def test_activation_memory_is_korthikantis_table_2_by_hand():
    m = ModelSpec("x", 4, 1024, 16, 2048, 1000, 4096)
    sbh, attn = 2048 * 2 * 1024, 5 * 16 * 2048 / 1024
    t = dict(micro_batch_size=2)
    none = costs.activation_bytes_per_layer(m, Training(**t, recompute="none"), tp=4)
    sp = costs.activation_bytes_per_layer(
        m, Training(**t, recompute="none", sequence_parallel=True), tp=4
    )
    sel = costs.activation_bytes_per_layer(
        m, Training(**t, recompute="selective", sequence_parallel=True), tp=4
    )
    full = costs.activation_bytes_per_layer(m, Training(**t, recompute="full"), tp=4)
    assert none == pytest.approx(sbh * (10 + 24 / 4 + attn / 4))
    assert sp == pytest.approx(sbh / 4 * (34 + attn))
    assert sel == pytest.approx(sbh / 4 * 34)
    assert full == pytest.approx(2 * sbh)


@pytest.mark.parametrize(
    "zero,expected", [(0, (2, 2, 12)), (1, (2, 2, 3)), (2, (2, 0.5, 3)), (3, (0.5, 0.5, 3))]
)
def test_zero_partitions_16_bytes_per_param(zero, expected):
    assert costs.state_bytes_per_param(Training(zero=zero), dp=4) == expected


def test_more_tp_means_less_weight_memory_per_rank():
    m = MODELS["llama3-70b"]
    per = [
        costs.stage_memory(m, Training(), (1, tp, 4), 1, 3, [4, 3, 2, 1])[1].weights_bytes
        for tp in (1, 2, 4, 8)
    ]
    assert per == sorted(per, reverse=True) and per[0] / per[-1] == pytest.approx(8, rel=0.01)


def test_ring_all_reduce_factor_and_size_one_groups_send_nothing():
    assert costs_time.ring_factor(8) == pytest.approx(2 * 7 / 8)
    assert costs_time.ring_factor(1) == 0
    m, t = MODELS["tiny"], Training()
    alone = costs_time.step_comm_bytes(m, t, Layout(dp=1, tp=1, pp=1), 1, 1000)
    assert alone == {"tp_bytes": 0, "pp_bytes": 0, "dp_bytes": 0}
    dp4 = costs_time.step_comm_bytes(m, t, Layout(dp=4, tp=1, pp=1), 1, 1000)
    assert dp4["dp_bytes"] == pytest.approx(1000 * 2 * 2 * 3 / 4)


def test_uneven_layers_shorten_the_end_stages_as_llama_405b_does():
    m = MODELS["llama3-405b"]
    layers = [costs.layers_per_chunk(m, 16, 1, s) for s in range(16)]
    assert layers[0] == layers[-1] == 7 and set(layers[1:-1]) == {8} and sum(layers) == 126


def test_crossing_nodes_makes_tp_slower():
    m, t, hw = MODELS["llama3-8b"], Training(), HARDWARE["h100-sxm"]
    inside = costs_time.stage_durations(m, hw, t, Layout(1, 8, 1, gpus_per_node=8), 1, 0)[1]
    across = costs_time.stage_durations(m, hw, t, Layout(1, 8, 1, gpus_per_node=4), 1, 0)[1]
    assert across / inside == pytest.approx(hw.intra_gbps / hw.inter_gbps, rel=0.2)


def test_a_tied_head_on_the_embeddings_rank_is_not_counted_twice():
    m = MODELS["megatron-1.7b"]
    one_stage = costs.stage_params(m, 0, 1, 1, 1, head_stage=0)
    assert one_stage == costs.total_params(m)


def test_selective_recompute_lengthens_the_backward_only():
    m, hw, layout = MODELS["gpt3-175b"], HARDWARE["a100-80g"], Layout(1, 8, 8)
    none = costs_time.stage_durations(m, hw, Training(recompute="none"), layout, 1, 7)[0][0]
    sel = costs_time.stage_durations(m, hw, Training(recompute="selective"), layout, 1, 7)[0][0]
    full = costs_time.stage_durations(m, hw, Training(recompute="full"), layout, 1, 7)[0][0]
    assert none.f == sel.f == full.f
    assert none.b < sel.b < full.b and full.b == pytest.approx(none.b + none.f)


def test_a_forward_only_step_costs_a_forward_and_nothing_after_it():
    from app.core.evaluate import evaluate
    from app.core.scenario import Scenario

    base = dict(dp=2, tp=2, pp=4, microbatches=8, model="megatron-1.7b", recompute="full")
    naive = evaluate(Scenario(schedule="naive", **base))
    train = evaluate(Scenario(schedule="1f1b", **base))
    # Training FLOPs are 3 forwards (backward = 2x forward); naive runs only the forward.
    assert naive["compute"]["model_flops_per_iteration"] == pytest.approx(
        train["compute"]["model_flops_per_iteration"] / 3
    )
    assert naive["compute"]["hardware_flops_per_iteration"] == pytest.approx(
        naive["compute"]["model_flops_per_iteration"]
    )
    assert naive["comm"]["dp_bytes"] == 0 and naive["breakdown"]["dp_s"] == 0
    assert naive["breakdown"]["optimizer_s"] == 0 and naive["timeline"]["tail"] == []
    assert naive["comm"]["pp_bytes"] == pytest.approx(train["comm"]["pp_bytes"] / 2)
    assert naive["comm"]["tp_bytes"] == pytest.approx(train["comm"]["tp_bytes"] / 3)
    assert 0 < naive["mfu"] < 1
