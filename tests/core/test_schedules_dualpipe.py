"""DualPipe (DeepSeek-V3 §3.2.1, deepseek-ai/DualPipe dualpipe.py): order, timing, memory."""

import pytest

from app.core.cost import memory
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import model_of, training_of
from app.core.schedules import Action, ScheduleError, build, stages_per_copy, virtual_stage
from app.core.schedules import dualpipe as schedules_dualpipe
from app.core.schedules.units import unit_plan
from app.core.simulate import Durations, simulate
from app.core.views import flow

UNIT = Durations(f=1.0, b=1.0, w=1.0, p2p=0.0)
SIZES = [(pp, m) for pp in (2, 4, 6, 8) for m in (2 * pp, 2 * pp + 2, 4 * pp, 6 * pp)]


def _sim(pp, m, d=UNIT):
    return simulate("dualpipe", build("dualpipe", pp, m, 2), d, 2)


@pytest.mark.parametrize(("pp", "m"), SIZES)
def test_each_rank_runs_half_the_microbatches_each_way_once(pp, m):
    half = m // 2
    for row in build("dualpipe", pp, m, 2):
        down = {Action(k, i, 0) for k in "FBW" for i in range(half)}
        up = {Action(k, i, 1) for k in "FBW" for i in range(half, m)}
        assert len(row) == 3 * m and set(row) == down | up


@pytest.mark.parametrize(("pp", "m"), SIZES)
def test_bubble_is_deepseek_table_2_at_f_b_w_1(pp, m):
    # DeepSeek-V3 Table 2: DualPipe's bubble (PP/2-1)(F&B + B - 3W), B a whole backward
    # (here B + W = 2) and F&B the overlapped pair (F + whole B = 3 with no overlap gain).
    t = _sim(pp, m)
    bubble = (pp // 2 - 1) * (3 + 2 - 3 * 1)
    assert t.busy == [3.0 * m] * pp  # every rank: m micro-batches' F, B and W
    assert t.makespan - max(t.busy) == bubble
    assert t.makespan == 3 * m + bubble


@pytest.mark.parametrize(("pp", "m"), SIZES)
def test_pp_plus_one_activations_in_flight(pp, m):
    # DeepSeek-V3 Table 2: DualPipe holds PP+1 micro-batches' activations (1F1B: PP).
    assert _sim(pp, m).peak_inflight == [pp + 1] * pp


def test_sizes_dualpipe_py_refuses_are_refused_quoting_its_rule():
    with pytest.raises(ScheduleError) as odd_pp:
        build("dualpipe", 3, 12, 2)
    assert odd_pp.value.field == "pp"
    for m in (6, 7, 9):  # below 2*pp = 8, or odd
        with pytest.raises(ScheduleError) as bad:
            build("dualpipe", 4, m, 2)
        assert bad.value.field == "microbatches"
        assert "num_chunks >= num_ranks * 2" in bad.value.reason
    with pytest.raises(ScenarioError) as via_scenario:
        evaluate(Scenario(schedule="dualpipe", pp=4, microbatches=6, dp=1, tp=1))
    assert via_scenario.value.field == "microbatches"


def test_placement_two_copies_each_micro_batch_runs_one_copy_whole():
    pp, m = 4, 8
    assert stages_per_copy("dualpipe", pp, 2) == pp
    # rank r: chunk 0 = down copy stage r, chunk 1 = up copy stage p-1-r (chain index p + s)
    assert [virtual_stage("dualpipe", r, 0, pp) for r in range(pp)] == [0, 1, 2, 3]
    assert [virtual_stage("dualpipe", r, 1, pp) - pp for r in range(pp)] == [3, 2, 1, 0]
    t = _sim(pp, m)
    first_f = {}
    for e in t.events:
        if e.kind == "F" and (e.microbatch not in first_f or e.start < first_f[e.microbatch][0]):
            first_f[e.microbatch] = (e.start, e.stage, e.chunk)
    assert {first_f[i][1:] for i in range(m // 2)} == {(0, 0)}  # down: enters at rank 0
    assert {first_f[i][1:] for i in range(m // 2, m)} == {(pp - 1, 1)}  # up: at rank p-1


def test_flow_sends_stay_inside_each_copy():
    pp, m = 4, 8
    events = [e._asdict() for e in _sim(pp, m).events]
    sends = flow.sends("dualpipe", events, pp, 2)
    assert sends and all(s["src_chunk"] == s["dst_chunk"] for s in sends)
    # Each micro-batch crosses p-1 boundaries forward and p-1 backward in its copy.
    assert len(sends) == m * 2 * (pp - 1)
    for s in sends:
        step = 1 if (s["kind"] == "F") == (s["src_chunk"] == 0) else -1
        assert s["dst_stage"] == s["src_stage"] + step


def test_sends_follow_dualpipe_py_an_overlapped_pair_sends_when_it_ends():
    pp, m = 4, 12
    actions = build("dualpipe", pp, m, 2)
    t = _sim(pp, m)
    at = {(e.stage, e.kind, e.microbatch, e.chunk): e for e in t.events}
    checked = 0
    for rank, row in enumerate(actions):
        release, waits, pairs = unit_plan("dualpipe", row, rank, pp)
        for first, last in pairs:
            f, b = row[first], row[first + 1]
            assert f.kind == "F" and b.kind == "B" and f.chunk != b.chunk
            assert row[last] == Action("W", b.microbatch, b.chunk)  # a whole backward
            ends = ((pp - 1, 0), (0, 1))  # (rank, chunk) of each copy's last stage
            starts = ((0, 0), (pp - 1, 1))
            # Both outputs leave when the pair ends (none from a copy's last F or first B).
            assert release[first] == (first if (rank, f.chunk) in ends else last)
            assert release[first + 1] == (first + 1 if (rank, b.chunk) in starts else last)
            loss_stage = (rank, b.chunk) in ends  # B starts from the loss: nothing to receive
            # The pair posts both receives first: F waits for B's gradient too.
            assert waits[first] == (() if loss_stage else (first + 1,))
            pair_end = at[(rank, *row[last])].end
            nxt = rank + 1 if f.chunk == 0 else rank - 1
            consumer = at.get((nxt, "F", f.microbatch, f.chunk))
            if consumer is not None:
                assert consumer.start >= pair_end
                checked += 1
    assert checked > 10


def test_middle_ranks_run_their_first_main_pair_apart_and_off_middle_f0_waits_for_f1():
    pp, m = 4, 8
    actions = build("dualpipe", pp, m, 2)
    # dualpipe.py step 4: "We don't overlap these two chunks" on ranks p/2-1 and p/2.
    n_pairs = [len(unit_plan("dualpipe", row, r, pp)[2]) for r, row in enumerate(actions)]
    half_ranks, expected = pp // 2, []
    for rank in range(pp):
        h = min(rank, pp - 1 - rank)
        middle = h == half_ranks - 1
        # step 4: m/2 - p + h + 1 rounds of two pairs (one fewer on the middle ranks);
        # step 5: p/2 - h - 1 pairs.
        expected.append(2 * (m // 2 - pp + h + 1) - middle + (half_ranks - h - 1))
    assert n_pairs == expected
    # Step 2 off the middle: F0's output is sent after the F1 that follows it.
    plan = schedules_dualpipe.plan(0, pp, m)
    i = plan.ops.index(("F", 2, 0))  # rank 0's step-2 F0 (after step 1's two)
    assert plan.ops[i + 1][0] == "F" and plan.ops[i + 1][2] == 1
    assert plan.release[i] == i + 1


def _rank_memory(schedule, pp, m):
    s = Scenario(schedule=schedule, pp=pp, microbatches=m, dp=1, tp=1, model="llama3-8b")
    return s, evaluate(s)["memory"]["per_stage"]


def test_memory_two_copies_of_the_parameters_and_pp_plus_one_activations():
    pp, m = 4, 8
    s, dual = _rank_memory("dualpipe", pp, m)
    _, one = _rank_memory("1f1b", pp, m)
    # Each rank holds two stages' weights: a middle rank exactly twice 1F1B's middle rank.
    assert dual[1]["params"] == dual[2]["params"] == 2 * one[1]["params"]
    assert dual[1]["layers"] == [8, 8] and one[1]["layers"] == [8]
    # Both end ranks hold an embedding and a head (one of each copy): the same parameters.
    assert dual[0]["params"] == dual[pp - 1]["params"]
    assert dual[0]["params"] == one[0]["params"] + one[pp - 1]["params"]
    balance = evaluate(s)["stage_balance"]["per_stage"]
    assert [(st["embedding"], st["head"]) for st in balance] == [
        (True, True),
        *[(False, False)] * 2,
        (True, True),
    ]
    # PP+1 micro-batches of a stage's (8 layers) activations on a middle rank.
    model = model_of(s)
    per_layer = memory.activation_bytes_per_layer(model, training_of(s), 1)
    assert dual[1]["activations_bytes"] == pytest.approx((pp + 1) * 8 * per_layer)


def test_stage_layers_splits_one_copy():
    s = Scenario(schedule="dualpipe", pp=4, microbatches=8, dp=1, tp=1, stage_layers="7,9,9,7")
    per_stage = evaluate(s)["memory"]["per_stage"]
    assert [st["layers"] for st in per_stage] == [[7, 7], [9, 9], [9, 9], [7, 7]]
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(schedule="dualpipe", pp=2, microbatches=4, stage_layers="8,8,8,8"))
    assert err.value.field == "stage_layers"
