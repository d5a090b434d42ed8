"""The cost model's arithmetic against the papers' closed forms and hand calculations."""

from dataclasses import replace

import pytest

from app.core.cost import comm, durations, flops, memory
from app.core.cost.shapes import layers_per_chunk
from app.core.inputs.presets import HARDWARE, MODELS, ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout

RECOMPUTES = ("none", "selective", "full")

TABLE1_PARAMS_B = {  # Narayanan et al. 2021 Table 1, billions
    "megatron-1.7b": 1.7, "megatron-3.6b": 3.6, "megatron-7.5b": 7.5, "megatron-18b": 18.4,
    "megatron-39b": 39.1, "megatron-76b": 76.1, "megatron-145b": 145.6, "megatron-310b": 310.1,
    "megatron-530b": 529.6, "megatron-1t": 1008.0,
}  # fmt: skip


@pytest.mark.parametrize("name,billions", TABLE1_PARAMS_B.items())
def test_parameter_counts_match_megatron_table_1(name, billions):
    assert memory.total_params(MODELS[name]) / 1e9 == pytest.approx(billions, rel=0.03)


def test_parameter_formula_is_narayanans_closed_form():
    m = MODELS["gpt3-175b"]
    nl, h, v, s = m.layers, m.hidden, m.vocab, m.seq_len
    closed = 12 * nl * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * nl * h))
    assert memory.total_params(m) == pytest.approx(closed, rel=1e-4)


@pytest.mark.parametrize("name", ["llama3-8b", "llama3-70b", "llama3-405b"])
def test_llama3_sizes_match_their_names(name):
    expected = {"llama3-8b": 8.03, "llama3-70b": 70.6, "llama3-405b": 405.9}[name]
    assert memory.total_params(MODELS[name]) / 1e9 == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("name", ["megatron-1.7b", "gpt3-175b", "megatron-1t"])
def test_flops_are_equation_3_exactly(name):
    m, batch = MODELS[name], 1536
    nl, h, v, s = m.layers, m.hidden, m.vocab, m.seq_len
    eq3_recompute = 96 * batch * s * nl * h**2 * (1 + s / (6 * h) + v / (16 * nl * h))
    eq3_model = 72 * batch * s * nl * h**2 * (1 + s / (6 * h) + v / (12 * nl * h))
    assert flops.hardware_flops(m, batch, "full") == pytest.approx(eq3_recompute, rel=1e-12)
    assert flops.model_flops(m, batch) == pytest.approx(eq3_model, rel=1e-12)


def test_activation_memory_is_korthikantis_table_2_by_hand():
    m = ModelSpec("x", 4, 1024, 16, 2048, 1000, 4096)
    sbh, attn = 2048 * 2 * 1024, 5 * 16 * 2048 / 1024
    t = dict(micro_batch_size=2, flash_attention=False)  # Table 2 predates flash attention
    none = memory.activation_bytes_per_layer(m, Training(**t, recompute="none"), tp=4)
    sp = memory.activation_bytes_per_layer(
        m, Training(**t, recompute="none", sequence_parallel=True), tp=4
    )
    sel = memory.activation_bytes_per_layer(
        m, Training(**t, recompute="selective", sequence_parallel=True), tp=4
    )
    full = memory.activation_bytes_per_layer(m, Training(**t, recompute="full"), tp=4)
    assert none == pytest.approx(sbh * (10 + 24 / 4 + attn / 4))
    assert sp == pytest.approx(sbh / 4 * (34 + attn))
    assert sel == pytest.approx(sbh / 4 * 34)
    assert full == pytest.approx(2 * sbh)


@pytest.mark.parametrize(
    "zero,expected", [(0, (2, 2, 12)), (1, (2, 2, 3)), (2, (2, 0.5, 3)), (3, (0.5, 0.5, 3))]
)
def test_zero_partitions_16_bytes_per_param(zero, expected):
    # Rajbhandari et al. 2020 §3's 2 + 2 + 12 keeps 16-bit gradients: no fp32 buffer.
    t = Training(zero=zero, grad_accum_fp32=False)
    assert memory.state_bytes_per_param(t, dp=4) == expected


def test_more_tp_means_less_weight_memory_per_rank():
    m = MODELS["llama3-70b"]
    per = [
        memory.stage_memory(m, Training(), (1, tp, 4), 1, 3, [4, 3, 2, 1])[1].weights_bytes
        for tp in (1, 2, 4, 8)
    ]
    assert per == sorted(per, reverse=True) and per[0] / per[-1] == pytest.approx(8, rel=0.01)


def test_ring_all_reduce_factor_and_size_one_groups_send_nothing():
    assert comm.ring_factor(8) == pytest.approx(2 * 7 / 8)
    assert comm.ring_factor(1) == 0
    m, t = MODELS["tiny"], Training()
    alone = comm.step_comm_bytes(m, t, Layout(dp=1, tp=1, pp=1), 1, 1000)
    assert alone == {"tp_bytes": 0, "pp_bytes": 0, "dp_bytes": 0}
    dp4 = comm.step_comm_bytes(m, t, Layout(dp=4, tp=1, pp=1), 1, 1000)
    assert dp4["dp_bytes"] == pytest.approx(1000 * 2 * 2 * 3 / 4)


def test_uneven_layers_shorten_the_end_stages_as_llama_405b_does():
    m = MODELS["llama3-405b"]
    layers = [layers_per_chunk(m, 16, 1, s) for s in range(16)]
    assert layers[0] == layers[-1] == 7 and set(layers[1:-1]) == {8} and sum(layers) == 126


def test_crossing_nodes_makes_tp_slower_at_the_nics_its_members_bring():
    m, t, hw = MODELS["llama3-8b"], Training(), HARDWARE["h100-sxm"]
    half = replace(hw, gpus_per_node=4)
    inside = durations.stage_durations(m, hw, t, Layout(1, 8, 1, gpus_per_node=8), 1, 0)[1]
    across = durations.stage_durations(m, half, t, Layout(1, 8, 1, gpus_per_node=4), 1, 0)[1]
    e = hw.efficiency
    # 4 GPUs per node leave over 4 NICs, not one: the ring's slowest hop is 4 NIC shares.
    nics = 4 * hw.inter_gbps * e.inter_busbw_fraction
    assert across / inside == pytest.approx(hw.intra_gbps * e.intra_busbw_fraction / nics, rel=0.2)


def test_a_tied_head_on_the_embeddings_rank_is_not_counted_twice():
    m = MODELS["megatron-1.7b"]
    one_stage = memory.stage_params(m, 0, 1, 1, 1, head_stage=0)
    assert one_stage == memory.total_params(m)


def test_selective_recompute_lengthens_the_backward_only_without_flash_attention():
    m, hw, layout = MODELS["gpt3-175b"], HARDWARE["a100-80g"], Layout(1, 8, 8)

    def first(**kw):
        return durations.stage_durations(m, hw, Training(**kw), layout, 1, 7)[0][0]

    none, sel, full = (first(recompute=r, flash_attention=False) for r in RECOMPUTES)
    assert none.f == sel.f == full.f
    assert none.b < sel.b < full.b and full.b == pytest.approx(none.b + none.f)
    # Flash attention's backward recomputes the scores anyway: selective adds nothing.
    flash = [first(recompute=r) for r in RECOMPUTES]
    assert flash[0].b == flash[1].b < flash[2].b


def test_a_forward_only_step_costs_a_forward_and_nothing_after_it():
    from app.core.evaluate import evaluate
    from app.core.inputs.scenario import Scenario

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
