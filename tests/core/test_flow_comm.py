"""The flow view's CP ring steps and EP all-to-all pulses (issue 27): counted per layer pass
as the cost model charges them (cp - 1 ring steps; dispatch and combine per MoE layer), with
the cost model's own seconds, and absent at cp = ep = 1 so the 3D flow is unchanged."""

from __future__ import annotations

import pytest

from app.core.cost import comm, compute, shapes
from app.core.cost.durations import cp_ring_s, layer_cost
from app.core.evaluate import evaluate
from app.core.evaluate.one_scenario import layout_of
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario
from app.core.views.flow import flow_view

pytestmark = pytest.mark.timeout(60)

# Llama 3 8B at 8k tokens, a CP ring of 4 on 2 GPUs per node: each ring crosses nodes, so
# some of every step outlasts its share of attention and is exposed.
CP = {"model": "llama3-8b", "seq_len": 8192, "tp": 2, "pp": 2, "dp": 1, "cp": 4,
      "microbatches": 4, "gpus_per_node": 2}  # fmt: skip
EP = {"model": "mixtral-8x7b", "tp": 1, "pp": 4, "dp": 8, "ep": 8, "microbatches": 8,
      "order": "megatron-5d"}  # fmt: skip


def _priced(q: dict):
    """The scenario, its view, its flow, and what the cost model prices a layer with."""
    s = Scenario.model_validate(q)
    view = evaluate(s)
    hw, t = specs.hardware_of(s), specs.training_of(s)
    layout = layout_of(s, hw.gpus_per_node)
    m = shapes.as_held(specs.model_of(s), s.tp, t.vocab_multiple, s.ep, s.routing_imbalance)
    return s, view, flow_view(view), (m, hw, t, layout)


def _clauses(flow: dict, key: str) -> list[list]:
    return [c for c in flow["captions"]["clauses"] if c[0] in (key, key + "_one")]


def test_cp_ring_steps_per_layer_pass_are_cp_minus_one_with_the_cost_models_seconds():
    s, view, flow, (m, hw, t, layout) = _priced(CP)
    ring = flow["comm"]["cp"]
    assert flow["comm"]["ep"] is None
    assert ring["size"] == 4 and ring["steps"] == 3
    attn_f, attn_b = compute.attention_seconds(m, hw, t, layout.tp)
    exposed = cp_ring_s(m, hw, t, layout, attn_f, attn_b)
    assert exposed[0] > 0 and exposed[1] > 0  # the ring crosses nodes: not all hidden
    assert ring["exposed_s"] == {"F": exposed[0], "B": exposed[1]}
    kv = comm.cp_kv_bytes(m, t, layout.tp)
    assert ring["kv_bytes"] == kv
    assert ring["hop_s"] == {"F": comm.p2p_s(kv, True, hw), "B": comm.p2p_s(2 * kv, True, hw)}
    assert ring["behind_s"] == {"F": attn_f / 4, "B": attn_b / 4}
    # Each step is exposed by what its hop outlasts its share of attention (cp_ring_s).
    for p in ("F", "B"):
        step = max(0.0, ring["hop_s"][p] - ring["behind_s"][p])
        assert ring["exposed_s"][p] == pytest.approx(ring["steps"] * step)
    # Per chunk: every layer's ring, as the stage balance's layers say.
    layers = [st["layers"] for st in view["stage_balance"]["per_stage"]]
    assert [[c["layers"] for c in row] for row in flow["comm"]["chunks"]] == layers
    for row in flow["comm"]["chunks"]:
        for c in row:
            assert c["ring_steps"] == c["layers"] * 3
            assert c["cp_exposed_s"]["F"] == pytest.approx(c["layers"] * exposed[0])
            assert c["a2a_exposed_s"] == {"F": 0.0, "B": 0.0}


def test_the_ring_is_inside_the_layer_cost_the_timeline_was_priced_with():
    """The flow's exposed ring is the part of layer_cost's F and B that cp_ring_s added."""
    _, _, flow, (m, hw, t, layout) = _priced(CP)
    cost = layer_cost(m, hw, t, layout)
    attn_f, attn_b = compute.attention_seconds(m, hw, t, layout.tp)
    ring = flow["comm"]["cp"]["exposed_s"]
    gemm = compute.layer_gemm_seconds(m, hw, t, layout.tp)
    ew = compute.hbm_seconds(compute.elementwise_bytes(m, t, layout.tp), hw)
    assert cost.f == pytest.approx(gemm + attn_f + ew + ring["F"])
    assert cost.b == pytest.approx(gemm + attn_b + 2 * ew + ring["B"])


def test_cp_captions_name_the_busy_stages_ring_and_steps():
    _, view, flow, _ = _priced(CP)
    found = _clauses(flow, "cp_ring")
    assert found and all(c[2] == 3 and c[3] == 4 for c in found)
    assert {c[1] for c in found} >= {"0", "1", "0–1"}
    # Every frame in which a stage runs F or B says so; no frame without one does.
    table, events = flow["captions"]["clauses"], view["timeline"]["events"]
    for t, ids in zip(flow["frames"]["times"], flow["captions"]["frames"], strict=True):
        busy = any(e["kind"] in "FB" and e["start"] <= t < e["end"] for e in events)
        assert busy == any(table[i][0].startswith("cp_ring") for i in ids), t


def test_ep_dispatch_and_combine_per_moe_layer_pass_sum_to_the_cost_models_all_to_all():
    _, view, flow, (m, hw, t, layout) = _priced(EP)
    ep = flow["comm"]["ep"]
    assert flow["comm"]["cp"] is None
    assert ep["size"] == 8 and ep["per_layer"] == 2
    layer = comm.moe_a2a_s(m, hw, t, layout)
    assert layer > 0
    for p in ("F", "B"):
        assert ep["exposed_s"][p] == layer
        assert ep["per_layer"] * ep["each_s"][p] == pytest.approx(layer)
    assert ep["bytes"] == comm.moe_a2a_buffer_bytes(m, t) / 2
    share = m.moe_layers / m.layers
    for row in flow["comm"]["chunks"]:
        for c in row:
            assert c["ring_steps"] == 0
            assert c["a2a_exposed_s"]["F"] == pytest.approx(c["layers"] * share * layer)
    found = _clauses(flow, "ep_a2a")
    assert found and all(c[2] == 8 for c in found)
    assert not _clauses(flow, "cp_ring")


def test_cp_and_ep_together_give_both():
    q = {**EP, "cp": 2, "dp": 4}
    _, _, flow, _ = _priced(q)
    assert flow["comm"]["cp"]["steps"] == 1 and flow["comm"]["ep"]["size"] == 8
    assert _clauses(flow, "cp_ring") and _clauses(flow, "ep_a2a")


@pytest.mark.parametrize(
    "q",
    [
        {"dp": 2, "tp": 2, "pp": 4, "microbatches": 8},
        {"f_time": 1, "pp": 4},
        {**EP, "ep": 1},  # a mixture of experts without EP: no all-to-all over other GPUs
    ],
)
def test_cp_ep_one_flow_has_no_comm_and_no_new_clauses(q):
    s = Scenario.model_validate(q)
    view = evaluate(s)
    assert "layer_comm" not in view["timeline"]
    flow = flow_view(view)
    assert "comm" not in flow
    keys = {c[0] for c in flow["captions"]["clauses"]}
    assert not keys & {"cp_ring", "cp_ring_one", "ep_a2a", "ep_a2a_one"}


def test_teaching_units_scale_the_ring_like_the_tp_pulse():
    """With f_time the timeline is in teaching units; the ring is scaled as tp_time is."""
    base = {**CP, "f_time": 1}
    taught = evaluate(Scenario.model_validate(base))["timeline"]
    real = evaluate(Scenario.model_validate(CP))["timeline"]
    scale = taught["tp_time"] / real["tp_time"]
    for p in ("F", "B"):
        got = taught["layer_comm"]["cp"]["hop_s"][p]
        assert got == pytest.approx(real["layer_comm"]["cp"]["hop_s"][p] * scale)


def test_dualpipev_pairs_are_listed_so_their_hidden_all_to_alls_get_no_strip():
    """DualPipe(V) hides a pair's all-to-alls under the other chunk (durations._pair_times):
    the flow lists the F and B of each overlapped pair; warm-up and cool-down stay exposed."""
    q = {**EP, "schedule": "dualpipev", "virtual_stages": 2}
    _, view, flow, _ = _priced(q)
    pairs = flow["comm"]["paired"]
    fb = {(e["stage"], e["kind"], e["microbatch"], e["chunk"])
          for e in view["timeline"]["events"] if e["kind"] in ("F", "B")}  # fmt: skip
    listed = {tuple(p) for p in pairs}
    assert listed and listed < fb  # some, never all: the warm-up forwards run alone
    assert {k for _, k, _, _ in listed} == {"F", "B"}
    assert _priced(EP)[2]["comm"]["paired"] == []  # 1F1B overlaps nothing
