"""The formula cards substitute the scenario's own numbers, and their causes add up: closed
form + causes = the simulated (or per-stage) figure the page shows beside it."""

import pytest

from app.core.evaluate import evaluate
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario
from app.core.schedules.pipeline import plan
from app.core.views.formula_bubble import MAX_DECOMPOSED, MIN_DELTA


def view(**q):
    return evaluate(Scenario(**q))


def numbers(side):
    return [t["v"] for t in side if isinstance(t, dict)]


@pytest.mark.parametrize(("pp", "m"), [(4, 4), (2, 8), (8, 16)])
def test_bubble_substitutes_p_and_m(pp, m):
    card = view(pp=pp, microbatches=m, dp=1)["formulas"]["bubble"]
    sym, sub, frac, result = card["chain"]
    assert sym == ["r = (p − 1) / (m + p − 1)"]
    assert numbers(sub) == [pp, m, pp]
    assert numbers(frac) == [pp - 1, m + pp - 1]
    assert result[0]["v"] == pytest.approx((pp - 1) / (m + pp - 1))


def test_interleaved_bubble_divides_by_v_chunks():
    card = view(pp=4, microbatches=8, schedule="interleaved", virtual_stages=2)["formulas"]
    sym, sub, frac, _ = card["bubble"]["chain"]
    assert "v·m" in sym[0] and numbers(sub) == [4, 2, 8, 4] and numbers(frac) == [3, 19]


def test_teaching_gap_is_the_p2p_hop_and_vanishes_without_it():
    q = dict(pp=4, microbatches=4, f_time=1, b_time=2)
    card = view(**q, p2p_time=0.1)["formulas"]["bubble"]
    (c,) = card["causes"]
    assert c["key"] == "formulas.cause.p2p" and c["args"][0] == {"v": 0.1, "u": "u"}
    assert card["closed"]["v"] + c["delta"]["v"] == pytest.approx(card["simulated"]["v"])
    assert card["simulated"]["v"] > card["closed"]["v"]
    flat = view(**q, p2p_time=0)["formulas"]["bubble"]
    assert flat["causes"] == [] and flat["simulated"]["v"] == pytest.approx(flat["closed"]["v"])


@pytest.mark.parametrize(
    "q",
    [{}, {"pp": 4, "microbatches": 4}, {"schedule": "zb-h1", "pp": 4, "microbatches": 8},
     {"schedule": "interleaved", "pp": 4, "microbatches": 8, "virtual_stages": 2}],
)  # fmt: skip
def test_bubble_causes_add_up_to_the_simulated_bubble(q):
    v = view(**q)
    card = v["formulas"]["bubble"]
    assert card["simulated"]["v"] == v["timeline"]["bubble_fraction"]
    total = card["closed"]["v"] + sum(c["delta"]["v"] for c in card["causes"])
    # Only causes under MIN_DELTA are left out (at most four: tp, p2p, uneven, schedule).
    assert total == pytest.approx(card["simulated"]["v"], abs=4 * MIN_DELTA)
    uneven = [c for c in card["causes"] if c["key"] == "formulas.cause.uneven"]
    assert uneven and uneven[0]["args"][0]["v"] == v["stage_balance"]["slowest_stage"]


def test_zero_bubble_schedules_name_their_own_saving():
    card = view(schedule="zb-h1", pp=4, microbatches=8)["formulas"]["bubble"]
    zb = [c for c in card["causes"] if c["key"] == "formulas.cause.zb"]
    assert card["reference"] and zb and zb[0]["delta"]["v"] < 0


def test_a_pipeline_too_large_to_resimulate_keeps_the_gap_without_causes():
    q = dict(pp=64, microbatches=512, dp=1, tp=1, model="custom", layers=128, hidden=1024,
             heads=16)  # fmt: skip
    assert MAX_DECOMPOSED < 64 * 512
    card = view(**q)["formulas"]["bubble"]
    assert card["decomposed"] is False and card["causes"] == []


@pytest.mark.parametrize(
    "q", [{}, {"pp": 4}, {"zero": 1}, {"zero": 3}, {"dtype": "fp32"}, {"micro_batch_size": 2},
          {"schedule": "interleaved", "pp": 4, "microbatches": 8, "virtual_stages": 2},
          {"schedule": "zb-h1", "pp": 4, "microbatches": 8},
          {"schedule": "dualpipev", "pp": 4, "microbatches": 8}],
)  # fmt: skip
def test_memory_formula_plus_causes_is_the_fullest_stage(q):
    v = view(**q)
    card = v["formulas"]["memory"]
    state, act = numbers(card["chain"][2])
    assert card["closed"]["v"] == pytest.approx(state + act)
    assert card["simulated"]["v"] == v["memory"]["peak_bytes"]
    total = card["closed"]["v"] + sum(c["delta"]["v"] for c in card["causes"])
    assert total == pytest.approx(card["simulated"]["v"], rel=3e-3)


def test_memory_formula_substitutes_params_and_parallel_sizes():
    s = Scenario(tp=4, pp=2, dp=2, zero=1)
    card = evaluate(s)["formulas"]["memory"]
    sub = numbers(card["chain"][1])
    # Megatron-LM dist_optimizer.md: bf16 weights with fp32 main grads, 2 + 4 + 12 B.
    assert sub[:6] == [evaluate(s)["compute"]["params_total"], 2.0, 4.0, 12.0, 4, 2]
    assert "o/DP" in card["chain"][0][0] and "w/DP" not in card["chain"][0][0]
    assert sub[7] == specs.model_of(s).layers


@pytest.mark.parametrize(
    "q", [{}, {"zero": 3}, {"sequence_parallel": True}, {"dtype": "fp32"}, {"tp": 1},
          {"pp": 1}, {"recompute": "full"}, {"schedule": "naive"},
          {"schedule": "interleaved", "pp": 4, "microbatches": 8, "virtual_stages": 2},
          {"recompute": "full", "recompute_layers": 3}, {"grad_reduce_fp32": True},
          {"zero": 3, "grad_reduce_fp32": True}],
)  # fmt: skip
def test_comm_chains_end_at_the_cost_models_bytes(q):
    v = view(**q)
    for axis, chain in v["formulas"]["comm"]["axes"].items():
        assert chain[-1][0]["v"] == pytest.approx(v["comm"][f"{axis}_bytes"]), axis


def test_tp_chain_substitutes_the_shapes():
    s = Scenario(tp=4, microbatches=8, micro_batch_size=2)
    m = specs.model_of(s)
    chain = evaluate(s)["formulas"]["comm"]["axes"]["tp"]
    busiest = max(sum(row) for row in plan(s.schedule, s.pp, s.virtual_stages, m.layers).layers)
    assert numbers(chain[1]) == [4, 4, m.seq_len, 2, m.hidden, 2, busiest, 8, 2]


def test_step_chain_adds_to_the_step_time_and_mfu_divides_out():
    v = view(pp=4, dp=4, overlap_grad_reduce=True)
    card = v["formulas"]["step"]
    assert sum(numbers(card["chain"][1])) == pytest.approx(v["step_time_s"])
    flops, t, n, peak = numbers(card["mfu"][1])
    assert flops / (t * n * peak) == pytest.approx(v["mfu"])
    assert numbers(card["tokens"][2]) == [v["tokens_per_s"]]


def test_world_and_batch_cards_follow_the_query():
    f = view(dp=4, tp=2, pp=2, microbatches=8, micro_batch_size=2)["formulas"]
    assert numbers(f["world"]["chain"][1]) == [4, 2, 2] and numbers(f["world"]["chain"][2]) == [16]
    assert numbers(f["batch"]["chain"][1]) == [4, 2, 8] and numbers(f["batch"]["chain"][2]) == [64]
