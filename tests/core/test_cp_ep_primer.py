"""The primer's CP/EP section: the causal chunks are balanced and cover the sequence once,
the ring's bytes and exposed time are the cost model's, activations fall with cp, and the
experts are split over the EP group without gap or overlap."""

from __future__ import annotations

import pytest

from app.core.cost import comm, compute
from app.core.cost.durations import cp_ring_s
from app.core.evaluate import prepare
from app.core.evaluate.primer import PrimerParams, primer
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario
from app.core.views.cp_ep_primer import causal_chunks


@pytest.mark.parametrize("cp", [1, 2, 3, 4, 8, 16])
def test_causal_chunks_cover_the_sequence_once_with_equal_causal_work(cp):
    chunks = causal_chunks(cp)
    assert sorted(c for pair in chunks for c in pair) == list(range(2 * cp))
    # Chunk c's queries see c + 1 chunks of keys under the causal mask: every rank's pair
    # sees 2·cp + 1 in all, the same share.
    assert {(a + 1) + (b + 1) for a, b in chunks} == {2 * cp + 1}


def _section(query: dict, rank: int = 0) -> tuple[dict, Scenario]:
    s = Scenario(**query)
    return primer(s, PrimerParams(rank=rank))["cp_ep"], s


def test_the_cp_ring_is_priced_by_the_cost_model():
    sec, s = _section({"dp": 1, "tp": 2, "pp": 1, "cp": 4, "gpus_per_node": 4}, rank=3)
    layout, _, cost = prepare(s)
    m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
    cp = sec["cp"]
    assert cp["ranks"] == layout.group("cp", 3) and cp["ranks"][cp["position"]] == 3
    assert cp["tokens_per_rank"] * 4 == m.seq_len and cp["ring_steps"] == 3
    assert cp["kv_bytes_per_step"] == comm.cp_kv_bytes(m, t, 2)
    # 2 · s/cp · kv_dim/tp · 2 bytes: K and V of this rank's tokens on its TP rank.
    assert cp["kv_bytes_per_step"] == 2 * (m.seq_len // 4) * m.kv_dim / 2 * 2
    attn = compute.attention_seconds(m, hw, t, 2)
    assert (cp["exposed_s"]["forward"], cp["exposed_s"]["backward"]) == cp_ring_s(
        m, hw, t, layout, *attn
    )
    assert cp["crosses_node"]  # cp x tp = 8 ranks on 4-GPU nodes


@pytest.mark.parametrize("cp", [1, 2, 4, 8])
def test_cp_never_raises_activation_memory(cp):
    sec, _ = _section({"dp": 1, "tp": 1, "pp": 1, "cp": cp})
    act = sec["cp"]["activation_bytes"]
    assert act["now"] <= act["cp1"]
    assert act["now"] == pytest.approx(act["cp1"] / cp, rel=0.02)


MIXTRAL = {"model": "mixtral-8x7b", "dp": 4, "tp": 2, "pp": 1, "ep": 4, "order": "megatron-5d"}


def test_the_experts_are_split_over_the_ep_group_without_gap_or_overlap():
    sec, s = _section(MIXTRAL, rank=5)
    layout, _, cost = prepare(s)
    m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
    ep = sec["ep"]
    assert ep["ranks"] == layout.group("ep", 5) and len(ep["ranks"]) == 4
    held = [e for lo, hi in ep["expert_ids"] for e in range(lo, hi + 1)]
    assert held == list(range(m.experts)) and ep["experts_per_rank"] == m.experts // 4
    # tp = 2 under sequence parallel: each TP rank dispatches its own half of the tokens.
    assert ep["a2a_buffer_bytes"] == comm.moe_a2a_buffer_bytes(m, t) / 2
    assert ep["a2a_sent_bytes"] == pytest.approx(ep["a2a_buffer_bytes"] * 3 / 4)
    assert ep["a2a_s"] == comm.moe_a2a_s(m, hw, t, layout) > 0


def test_a_dense_model_has_no_ep_section_and_ep_1_sends_nothing():
    assert _section({})[0]["ep"] is None
    sec, _ = _section({**MIXTRAL, "ep": 1})
    assert sec["ep"]["a2a_sent_bytes"] == 0 and sec["ep"]["a2a_s"] == 0


def test_the_zero_card_shards_over_dp_times_cp_as_the_memory_section_does():
    s = Scenario(dp=2, tp=1, pp=1, cp=4, zero=1)
    got = primer(s, PrimerParams(rank=1))
    assert sorted(s["rank"] for s in got["zero"]["shards"]) == list(range(8))
    row = next(z for z in got["zero"]["stages"] if z["zero"] == 1)
    assert row["optimizer_bytes"] == pytest.approx(got["memory"]["per_stage"][0]["optimizer_bytes"])


def test_the_zero_card_under_hsdp_shards_over_the_ranks_own_group():
    s = Scenario(dp=8, tp=1, pp=1, zero=3, dp_shard=4)
    got = primer(s, PrimerParams(rank=5))
    assert [x["rank"] for x in got["zero"]["shards"]] == [4, 5, 6, 7]
    row = next(z for z in got["zero"]["stages"] if z["zero"] == 3)
    assert row["weights_bytes"] == pytest.approx(got["memory"]["per_stage"][0]["weights_bytes"])
