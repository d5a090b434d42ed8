"""Context parallelism's three exchanges (Megatron --cp-comm-type): the p2p ring under
attention, Llama 3's all-gather and Ulysses' all-to-all, each against its closed form, and
Ulysses refused where the heads do not split over tp x cp."""

import pytest

from app.core.cost import comm
from app.core.cost.durations import cp_ring_s
from app.core.evaluate import evaluate, prepare
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario, ScenarioError

BASE = dict(model="llama3-8b", dp=1, tp=2, pp=1, cp=4, gpus_per_node=8, seq_len=32768)


def _parts(cp_comm):
    s = Scenario(**BASE, cp_comm=cp_comm)
    layout, _, cost = prepare(s)
    m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
    return s, layout, m, hw, t


def test_allgather_gathers_every_ranks_kv_block_and_reduce_scatters_it_back():
    _, layout, m, hw, t = _parts("allgather")
    block = comm.cp_kv_bytes(m, t, 2)
    place = comm.placement(layout, "cp", hw.domain_size)
    expect = comm.all_gather_s(4 * block, place, hw)  # (n-1)/n of the 4 blocks moves
    assert cp_ring_s(m, hw, t, layout, 1.0, 2.0) == (expect, expect)
    # Not hidden by attention, however long it runs.
    assert cp_ring_s(m, hw, t, layout, 1e3, 1e3) == (expect, expect)


def test_ulysses_all_to_alls_q_k_v_and_the_output():
    _, layout, m, hw, t = _parts("a2a")
    tokens = 32768 // 4
    per_rank = tokens * (m.q_dim + 2 * m.kv_dim + m.q_dim) / 2 * 2  # Q, K, V, O on a TP rank
    place = comm.placement(layout, "cp", hw.domain_size)
    expect = comm.all_to_all_s(per_rank, place, hw, messages=4)
    assert cp_ring_s(m, hw, t, layout, 1.0, 2.0) == (expect, expect)


def test_ulysses_across_nodes_sends_its_remote_share_through_its_own_nic():
    # tp=1, cp=8 on 4-GPU nodes: the CP group spans 2 nodes, 4 members in each. Every rank
    # sends 4/8 of its buffer off-node at one NIC share (comm.all_to_all_s; DeepEP's
    # measured per-GPU RDMA rate), not at the node's NICs pooled as a ring's.
    s = Scenario(**{**BASE, "tp": 1, "cp": 8, "gpus_per_node": 4}, cp_comm="a2a")
    layout, _, cost = prepare(s)
    m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
    place = comm.placement(layout, "cp", hw.domain_size)
    assert (place.size, place.per_domain) == (8, 4)
    per_rank = 32768 // 8 * (m.q_dim + 2 * m.kv_dim + m.q_dim) * 2  # Q, K, V, O; tp = 1
    e = hw.efficiency
    remote = per_rank * 4 / 8 / (hw.inter_gbps * 1e9 * e.inter_busbw_fraction)
    expect = remote + 4 * comm.ring_latency_s(place, hw)
    assert cp_ring_s(m, hw, t, layout, 1.0, 2.0) == (pytest.approx(expect),) * 2
    assert expect > comm.all_gather_s(per_rank, place, hw, messages=4)


def test_the_ring_hides_under_attention_and_the_collectives_do_not():
    times = {c: evaluate(Scenario(**BASE, cp_comm=c), lean=True)["step_time_s"]
             for c in ("p2p", "allgather", "a2a")}  # fmt: skip
    # Inside one node at 32k tokens the ring is hidden: the cheapest of the three.
    assert times["p2p"] < times["allgather"] and times["p2p"] < times["a2a"]


@pytest.mark.parametrize(("tp", "cp"), [(2, 8), (8, 2)])  # 8 KV heads over tp*cp = 16
def test_ulysses_needs_the_heads_to_split_over_tp_times_cp(tp, cp):
    q = {**BASE, "tp": tp, "cp": cp, "cp_comm": "a2a"}
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(**q), lean=True)
    assert err.value.field == "cp_comm" and "tp*cp = 16" in err.value.reason
    assert evaluate(Scenario(**{**q, "cp_comm": "p2p"}), lean=True)["step_time_s"] > 0


def test_the_api_names_cp_comm(client):
    r = client.get("/api/scenario?tp=8&cp=2&dp=1&pp=1&cp_comm=a2a")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "cp_comm"
    r = client.get("/api/scenario?cp_comm=ring")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "cp_comm"
