"""Mixture-of-experts cost (issue 27): active-parameter FLOPs, expert weights divided by ep,
the dispatch/combine all-to-all bytes in closed form, the routing-imbalance knob, and a dense
model's results untouched by the MoE knobs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.cost import comm, flops, shapes
from app.core.cost.memory_states import layer_params, total_params
from app.core.evaluate import evaluate
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario
from app.core.inputs.training import Training

MIXTRAL = MODELS["mixtral-8x7b"]
# A small MoE with dense first layers, every second layer MoE, and shared experts.
SMALL = replace(
    MODELS["tiny"], experts=8, top_k=2, expert_ffn=256, shared_experts=1, moe_every=2,
    first_dense_layers=1, gated_mlp=True,
)  # fmt: skip
EP5D = {"order": "megatron-5d", "pp": 1, "tp": 1, "microbatches": 2}


def test_mixtral_total_parameters_are_the_published_46_7b():
    # mistralai/Mixtral-8x7B-v0.1 model card and Jiang et al. 2024 §2: 46.7B (47B) in all.
    assert total_params(MIXTRAL) == pytest.approx(46.7e9, rel=2e-3)


@pytest.mark.parametrize("m", [MIXTRAL, SMALL])
def test_flops_per_token_are_the_active_dense_model_plus_the_router(m):
    """A MoE layer computes as a dense MLP of top_k + shared experts' width, plus the router's
    h x experts GEMM: 3 x 2 x h x experts FLOPs per token per MoE layer over a step."""
    w = m.moe_width
    active = replace(m, experts=0)
    moe_dense = replace(m, experts=0, ffn_hidden=(m.top_k + m.shared_experts) * w)
    dense_layers = m.layers - m.moe_layers
    per_layer = (
        dense_layers * flops.forward_flops_per_layer(active, m.seq_len)
        + m.moe_layers * flops.forward_flops_per_layer(moe_dense, m.seq_len)
        + m.moe_layers * 2.0 * m.seq_len * m.hidden * m.experts
    )
    expected = 3.0 * (per_layer + flops.forward_flops_logits(m, m.seq_len))
    assert flops.model_flops(m, 1) == pytest.approx(expected, rel=1e-12)


def test_ep_never_raises_expert_parameters_per_gpu():
    for m in (MIXTRAL, SMALL):
        held = [layer_params(shapes.as_held(m, 1, 1, ep)) for ep in (1, 2, 4, 8)]
        assert held == sorted(held, reverse=True) and held[-1] < held[0]
    per_gpu = []
    for ep in (1, 2, 4, 8):
        out = evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=ep, **EP5D))
        per_gpu.append(out["memory"]["per_stage"][0]["params"])
    assert per_gpu == sorted(per_gpu, reverse=True) and per_gpu[-1] < per_gpu[0] / 4


@pytest.mark.parametrize("ep", [1, 2, 4, 8])
def test_all_to_all_bytes_closed_form(ep):
    """2 (dispatch, combine) x tokens x top_k x h x element bytes x (ep-1)/ep per pass
    (Megatron-LM token_dispatcher.py, MoEAlltoAllTokenDispatcher)."""
    t = Training(micro_batch_size=2, microbatches=1, dtype="bf16")
    b, s, k, h = 2, MIXTRAL.seq_len, MIXTRAL.top_k, MIXTRAL.hidden
    assert comm.moe_a2a_buffer_bytes(MIXTRAL, t) == 2 * b * s * k * h * 2
    assert comm.moe_a2a_sent_bytes(MIXTRAL, t, ep) == 2 * b * s * k * h * 2 * (ep - 1) / ep


def test_all_to_all_is_in_the_step_only_with_ep():
    one = evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=1, **EP5D))
    eight = evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=8, **EP5D))
    # ep = 8: one expert per rank, grouped GEMMs 8x taller, plus the all-to-alls; the step
    # changes and the model FLOPs do not.
    assert one["step_time_s"] != eight["step_time_s"]
    assert one["compute"]["params_total"] == eight["compute"]["params_total"]


def test_routing_imbalance_slows_the_busiest_rank():
    times = [
        evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=8, routing_imbalance=x, **EP5D))[
            "step_time_s"
        ]
        for x in (1.0, 1.5, 2.0)
    ]
    assert times[0] < times[1] < times[2]


def test_busiest_share_is_bounded_by_the_knob():
    held = shapes.as_held(MIXTRAL, 1, 1, ep=2, imbalance=2.0)  # 4 local experts
    assert shapes.busiest_share(held) == pytest.approx((4 - 1 + 2.0) / 4)
    assert shapes.busiest_share(shapes.as_held(MIXTRAL, 1, 1, ep=8, imbalance=2.0)) == 2.0


def _numbers(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in ("query", "scenario", "model")}


@pytest.mark.parametrize(
    "query",
    [dict(model="llama3-8b"), dict(model="gpt3-1.3b", dp=4, tp=2, pp=2, zero=1)],
)
def test_a_dense_model_ignores_the_moe_knobs(query):
    """experts = 0: top_k, expert widths and the routing imbalance change nothing."""
    base = evaluate(Scenario(**query))
    knobs = evaluate(Scenario(**query, experts=0, top_k=2, expert_ffn=512, routing_imbalance=3.0))
    assert _numbers(base) == _numbers(knobs)
    assert shapes.layer_mix(MODELS[query["model"]]) == ((1.0, MODELS[query["model"]]),)


def test_expert_optimizer_state_shards_over_the_expert_data_group():
    """ZeRO-1: each rank keeps experts/ep experts' Adam state sharded over dp x cp / ep ranks
    (Megatron's expert-data-parallel group), so its bytes are total experts / dp whatever ep."""
    rows = []
    for ep in (1, 2, 4, 8):
        out = evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=ep, zero=1, **EP5D))
        rows.append(out["memory"]["per_stage"][0]["optimizer_bytes"])
    assert rows == pytest.approx([rows[0]] * 4, rel=1e-6)
    # Without ZeRO, optimizer state falls with ep as the weights do.
    plain = [
        evaluate(Scenario(model="mixtral-8x7b", dp=8, ep=ep, **EP5D))["memory"]["per_stage"][0][
            "optimizer_bytes"
        ]
        for ep in (1, 8)
    ]
    assert plain[1] < plain[0] / 4


@pytest.mark.parametrize(
    ("name", "total", "active"),
    [
        # Model cards: Mixtral 8x7B 46.7B total / 12.9B active (Jiang et al. 2024 §2: 47B,
        # 13B); 8x22B 141B / 39B (mistral.ai/news/mixtral-8x22b); Qwen3-30B-A3B 30.5B / 3.3B
        # and Qwen3-235B-A22B 235B / 22B (their Hugging Face model cards).
        ("mixtral-8x7b", 46.7e9, 12.9e9),
        ("mixtral-8x22b", 141e9, 39e9),
        ("qwen3-30b-a3b", 30.5e9, 3.3e9),
        ("qwen3-235b-a22b", 235e9, 22e9),
    ],
)
def test_moe_presets_have_their_published_total_and_active_parameters(name, total, active):
    m = MODELS[name]
    assert total_params(m) == pytest.approx(total, rel=0.01)
    # Active: the same model with top_k experts' width as one dense MLP (router left out).
    dense = replace(m, experts=0, ffn_hidden=m.top_k * m.moe_width)
    assert total_params(dense) == pytest.approx(active, rel=0.02)


def test_head_dim_widens_the_attention_only_where_given():
    m = MODELS["qwen3-30b-a3b"]
    assert (m.q_dim, m.kv_dim, m.head_size) == (32 * 128, 4 * 128, 128)
    llama = MODELS["llama3-8b"]
    assert (llama.q_dim, llama.head_size) == (llama.hidden, llama.hidden // llama.heads)
    out = evaluate(Scenario(model="qwen3-30b-a3b", dp=8, ep=8, **EP5D))
    assert out["compute"]["params_total"] == total_params(m)
