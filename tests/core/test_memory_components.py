"""Each memory component against the formula its comment cites, computed here from the
source's own expression: activations per architecture and recompute mode (Korthikanti et al.
2022 §4.1, Table 2, the same count tensor by tensor for SwiGLU and GQA), torchtitan's per-op
SAC, the loss's transients, Megatron's 18 bytes per parameter, pure 16-bit training, ZeRO-3's
gathered units, the allocator's fragmentation (GMLake) and the hardware's floor; and the
knobs' bounds (422 or ScenarioError naming the field)."""

from dataclasses import replace

import pytest
from pydantic import ValidationError

from app.core.cost import memory
from app.core.evaluate import evaluate, prepare
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.hardware_profile import parse_profile
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import hardware_of, training_of
from app.core.inputs.training import Training

GIB = 1 << 30
# A Llama-3-8B-shaped layer (GQA 32/8, SwiGLU 14336) and a GPT one (MHA, GeLU 4h).
LLAMA = ModelSpec("l", 4, 4096, 32, 8192, 128_256, 14336, gated_mlp=True, kv_heads=8,
                  tied_embeddings=False, learned_positions=False)  # fmt: skip
GPT = ModelSpec("g", 4, 1024, 16, 2048, 1000, 4096)


def per_layer(m, tp=1, **kw):
    return memory.activation_bytes_per_layer(m, Training(**kw), tp)


# --- activations ---------------------------------------------------------------------------


@pytest.mark.parametrize("tp", [1, 2, 8])
@pytest.mark.parametrize("fused", [False, True])
def test_swiglu_gqa_layer_keeps_its_tensors_sized_by_ffn_and_kv_width(tp, fused):
    h, f, s, b = 4096, 14336, 8192, 2
    k = h * 8 // 32  # the K and V width under 8 of 32 KV heads
    mlp = (6 if fused else 8) * f  # gate, up, (SiLU,) product at 2 bytes each
    whole = 4 * h + 4 * h  # two norm inputs, the attention's and the MLP's inputs
    split = 2 * h + 4 * k + 2 * h + mlp  # Q, K, V, projection input, MLP
    got = per_layer(LLAMA, tp, micro_batch_size=b, fused_swiglu=fused)
    assert got == pytest.approx(s * b * (whole + split / tp))
    sp = per_layer(LLAMA, tp, micro_batch_size=b, fused_swiglu=fused, sequence_parallel=True)
    assert sp == pytest.approx(s * b * (whole + split) / tp)


def test_gpt_layer_is_korthikanti_table_2_with_and_without_flash():
    h, a, s, b, t = 1024, 16, 2048, 2, 4
    sbh = s * b * h
    explicit = per_layer(GPT, t, micro_batch_size=b, flash_attention=False)
    assert explicit == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert per_layer(GPT, t, micro_batch_size=b) == pytest.approx(sbh * (10 + 24 / t))


def test_explicit_attention_without_dropout_keeps_only_the_softmax_output():
    a, s = 32, 8192
    flash = per_layer(LLAMA)
    explicit = per_layer(LLAMA, flash_attention=False)
    assert explicit - flash == pytest.approx(s * 2 * a * s)  # Korthikanti §4.1: 2as^2b
    with_dropout = per_layer(LLAMA, flash_attention=False, dropout=True)
    masks = 2 * 4096  # the two 1-byte sbh masks
    assert with_dropout - explicit == pytest.approx(s * (3 * a * s + masks))


def test_recompute_modes_keep_what_the_paper_says():
    h, s = 4096, 8192
    none = per_layer(LLAMA, flash_attention=False)
    sel = per_layer(LLAMA, flash_attention=False, recompute="selective")
    assert none - sel == pytest.approx(s * 2 * 32 * s)  # §4.2: the scores, nothing else
    assert per_layer(LLAMA, recompute="full") == pytest.approx(2 * s * h)  # Table 2: 2sbh
    sp = per_layer(LLAMA, 8, recompute="full", sequence_parallel=True)
    assert sp == pytest.approx(2 * s * h / 8)


@pytest.mark.parametrize("tp,sp", [(1, False), (4, True)])
def test_op_sac_keeps_every_other_matmul_and_the_attention_output(tp, sp):
    h, f, k, s = 4096, 14336, 1024, 8192
    # torchtitan _save_list: the layer input, wq, wv, w1 and w2 outputs, SDPA's output; w2's
    # output is whole under TP (partial sums), and under SP the two reduce-scatter outputs.
    kept = 2 * h / (tp if sp else 1) + (2 * h + 2 * k + 2 * h + 2 * f) / tp + 2 * h
    kept += 4 * h / tp if sp else 0
    t = dict(recompute="selective", selective_ac="op", sequence_parallel=sp)
    assert per_layer(LLAMA, tp, **t) == pytest.approx(s * kept)


def test_a_recomputed_layer_rebuilds_what_it_did_not_keep():
    t = Training(recompute="full")
    rebuilt = memory.recompute_bytes_per_layer(LLAMA, t, 1)
    assert rebuilt == pytest.approx(per_layer(LLAMA) - per_layer(LLAMA, recompute="full"))
    assert memory.recompute_bytes_per_layer(LLAMA, Training(), 1) == 0.0


# --- the loss ------------------------------------------------------------------------------


@pytest.mark.parametrize("tp", [1, 4])
def test_the_loss_transient_fused_and_unfused(tp):
    s, b, h, v = 8192, 2, 4096, 128_256
    inputs = 2 * s * b * h * 2  # the final norm's and the output layer's 16-bit inputs
    fused = memory.logits_transient_bytes(LLAMA, Training(micro_batch_size=b), tp)
    assert fused == pytest.approx(s * b * v / tp * (4 + 2) + inputs)  # fp32 copy + bf16
    t = Training(micro_batch_size=b, fused_cross_entropy=False)
    unfused = memory.logits_transient_bytes(LLAMA, t, tp)
    per = 16 if tp > 1 else 12  # 3 fp32 tensors; loss_parallel's backward holds 4
    assert unfused == pytest.approx(s * b * v / tp * per + inputs)
    assert unfused - inputs >= 3 * 4 * s * b * v / tp  # Korthikanti §4.3's 4sbV/t, 3x over


def test_only_the_head_rank_carries_the_loss():
    _, _, cost = prepare(Scenario(pp=4, dp=1, tp=1, model="llama3-8b"))
    loss = [st["logits_transient_bytes"] for st in cost.sections["memory"]["per_stage"]]
    assert loss[:3] == [0.0] * 3 and loss[3] > 0


# --- model state ---------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 8])
def test_megatron_keeps_18_bytes_per_parameter_6_plus_12_over_d_distributed(d):
    # Megatron-LM docs/source/api-guide/dist_optimizer.md: bf16 params, fp32 grads.
    plain = memory.state_bytes_per_param(Training(), d)
    assert sum(plain) == 18 and memory.grad_parts(Training()) == (0.0, 4.0)
    assert sum(memory.state_bytes_per_param(Training(zero=1), d)) == pytest.approx(6 + 12 / d)


def test_pure_16_bit_and_fp32_training():
    pure = Training(master_weights=False, grad_accum_fp32=False)
    assert memory.state_bytes_per_param(pure, 1) == (2, 2, 4)  # Adam moments in bf16
    fp32 = Training(dtype="fp32")
    assert memory.state_bytes_per_param(fp32, 1) == (4, 4, 8)  # ZeRO §3's fp32 Adam
    assert memory.grad_parts(fp32) == (4.0, 0.0)  # no separate buffer for fp32 grads


def test_the_json_splits_the_gradient_buffer_from_16_bit_gradients():
    on = evaluate(Scenario(zero=0))["memory"]["per_stage"][0]
    off = evaluate(Scenario(zero=0, grad_accum_fp32=False))["memory"]["per_stage"][0]
    assert on["grads_bytes"] == 0 and on["grad_accum_bytes"] == pytest.approx(4 * on["params"])
    assert off["grad_accum_bytes"] == 0 and off["grads_bytes"] == pytest.approx(2 * on["params"])


# --- ZeRO-3, the allocator and the floor ---------------------------------------------------


def test_zero3_gathers_two_units_less_the_own_shard():
    t = Training(zero=3)
    unit, rank = 10_000, 100_000
    assert memory.gather_bytes(unit, rank, t, 8) == pytest.approx(2 * unit * 2 * 7 / 8)
    assert memory.gather_bytes(unit, unit, t, 8) == pytest.approx(unit * 2 * 7 / 8)  # one unit
    assert memory.gather_bytes(unit, rank, Training(zero=2), 8) == 0.0
    assert memory.gather_bytes(unit, rank, t, 1) == 0.0


def test_reserved_adds_gmlakes_fragmentation_only_where_zero3_gathers():
    sharded = evaluate(Scenario(dp=4, zero=3))["memory"]["per_stage"][0]
    assert sharded["reserved_bytes"] == pytest.approx(sharded["allocated_bytes"] / (1 - 0.15))
    plain = evaluate(Scenario(dp=4, zero=1))["memory"]["per_stage"][0]
    assert plain["reserved_bytes"] == plain["allocated_bytes"]


def test_the_parts_sum_to_total_and_the_peak_is_the_fullest_total():
    mem = evaluate(Scenario(pp=4, dp=2, zero=3, microbatches=8))["memory"]
    parts = ("weights_bytes", "grads_bytes", "grad_accum_bytes", "optimizer_bytes",
             "activations_bytes", "gather_bytes", "logits_transient_bytes",
             "recompute_transient_bytes", "root_grads_bytes")  # fmt: skip
    for st in mem["per_stage"]:
        assert sum(st[p] for p in parts) == pytest.approx(st["allocated_bytes"])
        assert st["allocated_bytes"] + st["fragmentation_bytes"] == st["reserved_bytes"]
        assert st["reserved_bytes"] + st["floor_bytes"] == pytest.approx(st["total_bytes"])
    assert mem["peak_bytes"] == max(st["total_bytes"] for st in mem["per_stage"])
    assert mem["fits"] == (mem["peak_bytes"] <= mem["capacity_bytes"])


def test_the_presets_carry_a_measured_floor_and_reserved_plus_floor_is_judged():
    assert {hw.memory_floor_gib for hw in HARDWARE.values()} == {1.0}
    st = evaluate(Scenario())["memory"]["per_stage"][0]
    assert st["floor_bytes"] == GIB


def test_a_negative_floor_or_one_above_the_hbm_is_refused_naming_the_field():
    base = HARDWARE["h100-sxm"]
    for bad in (-1.0, 80.0, 100.0):
        with pytest.raises(ValueError, match="memory_floor_gib"):
            replace(base, memory_floor_gib=bad)
    text = '{"name": "lab", "peak_tflops": 100, "hbm_gib": 8, "hbm_tbps": 1, "intra_gbps": 10,' \
           ' "inter_gbps": 10, "source": "x", "memory_floor_gib": %s}'  # fmt: skip
    for bad in ("-0.5", "8", "9"):
        with pytest.raises(ValidationError) as err:
            parse_profile(text % bad)
        assert [e["loc"] for e in err.value.errors()] == [("memory_floor_gib",)]
    assert parse_profile(text % "0.5").to_spec().memory_floor_gib == 0.5
    with pytest.raises(ScenarioError) as err:
        hardware_of(Scenario(hbm_gib=0.5))
    assert err.value.field == "hbm_gib"
    assert isinstance(HardwareSpec("x", 1.0, 1.0, 1.0, 1.0, 1.0), HardwareSpec)  # 0 by default


# --- the knobs -----------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["grad_accum_fp32", "master_weights", "fused_cross_entropy",
                                   "fused_swiglu", "dropout", "selective_ac"])  # fmt: skip
def test_an_invalid_knob_is_a_422_naming_it(client, field):
    r = client.get(f"/api/scenario?{field}=maybe")
    assert r.status_code == 422, r.text
    assert any(d["loc"][-1] == field for d in r.json()["detail"]), r.json()


def test_op_sac_needs_selective_recompute():
    with pytest.raises(ScenarioError) as err:
        training_of(Scenario(recompute="full", selective_ac="op"))
    assert err.value.field == "selective_ac"
    assert training_of(Scenario(recompute="selective", selective_ac="op")).selective_ac == "op"
