"""Sequence parallelism is on by default wherever TP > 1, as Megatron-LM and NeMo recipes run
it, and off at TP = 1 (Megatron's arguments.py turns it off there); TP never splits KV heads
it cannot give whole to each rank."""

import pytest

from app.core.evaluate import planner
from app.core.evaluate.one_scenario import evaluate, prepare
from app.core.inputs.presets import HARDWARE, MODELS
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import check_model, model_of, training_of


def test_a_scenario_with_tp_runs_sequence_parallel_unless_told_not_to():
    assert Scenario().tp == 2 and training_of(Scenario()).sequence_parallel is True
    assert training_of(Scenario(tp=1)).sequence_parallel is False  # nothing to split over
    off = Scenario(sequence_parallel=False)
    assert training_of(off).sequence_parallel is False
    assert off.query() == {"sequence_parallel": "false"}  # the share link says it
    assert Scenario(sequence_parallel=True).query() == {}  # the default, left out


def test_metas_405b_layout_is_its_sp_figure_without_asking_for_sp():
    layout = dict(model="llama3-405b", hardware="h100-sxm", dp=128, tp=8, pp=16,
                  microbatches=16, schedule="interleaved", virtual_stages=4, zero=2)  # fmt: skip
    plain = evaluate(Scenario(**layout))
    asked = evaluate(Scenario(**layout, sequence_parallel=True))
    without = evaluate(Scenario(**layout, sequence_parallel=False))
    assert plain["mfu"] == asked["mfu"] and plain["memory"] == asked["memory"]
    # SP divides the norm and dropout activations by t (Korthikanti et al. 2022 Table 2).
    assert plain["memory"]["peak_bytes"] < without["memory"]["peak_bytes"]


def test_the_sequence_must_split_over_tp_only_when_sp_is_on():
    shape = dict(model="custom", layers=2, hidden=96, heads=6, seq_len=1000, tp=3, pp=1)
    s = Scenario(**shape)
    with pytest.raises(ScenarioError) as err:
        check_model(s, model_of(s))
    assert err.value.field == "sequence_parallel" and "on by default" in err.value.reason
    off = Scenario(**shape, sequence_parallel=False)
    check_model(off, model_of(off))  # no error: nothing is split along the sequence
    one = Scenario(**{**shape, "tp": 1, "heads": 6})
    check_model(one, model_of(one))


def test_tp_must_give_each_rank_whole_kv_heads():
    s = Scenario(model="llama3-8b", tp=16, pp=1, dp=1)  # 32 heads, 8 KV heads
    with pytest.raises(ScenarioError) as err:
        check_model(s, model_of(s))
    assert (err.value.field, err.value.key) == ("tp", "scenario.kv_heads_tp")
    assert err.value.params == {"kv_heads": 8, "tp": 16}
    prepare(Scenario(model="llama3-8b", tp=8, pp=1, dp=1))  # 8 KV heads over 8 ranks: fine


def test_the_planner_never_proposes_a_tp_that_splits_a_kv_head():
    # Qwen2.5-3B: 16 query heads, 2 KV heads, so TP 4 and 8 divide the heads but not the KV.
    m = MODELS["qwen2.5-3b"]
    assert m.kv_heads == 2 and m.heads % 8 == 0
    tps = {c.tp for c in planner.candidates(m, HARDWARE["h100-sxm"], 8, 64)}
    assert tps == {1, 2}
