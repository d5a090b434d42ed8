"""Uneven pipelines: stage_layers, any layer count over pp*v, per-chunk durations with the
embedding and the head on the end stages, and the per-stage balance the views draw."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.core.cost import compute, durations, memory
from app.core.evaluate import evaluate, prepare
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.models import MODELS
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules import build
from app.core.schedules.pipeline import chunk_layers, default_split
from app.core.simulate import Durations, peak_held, per_chunk, simulate

# A small custom model (fast to evaluate); tp=1 so the per-stage params are whole numbers.
SMALL = dict(hidden=256, heads=4, seq_len=256, vocab=1024, tp=1, dp=1)
# (schedule, virtual_stages) -> chunks per rank.
PLACEMENTS = [("1f1b", 1, 1), ("gpipe", 1, 1), ("interleaved", 2, 2), ("zbv", 1, 2)]


@st.composite
def uneven(draw):
    name, v, chunks = draw(st.sampled_from(PLACEMENTS))
    pp = draw(st.integers(2 if name == "zbv" else 1, 4))
    if name == "interleaved":
        pp = max(pp, 2)
    split = draw(st.lists(st.integers(1, 5), min_size=pp * chunks, max_size=pp * chunks))
    return dict(schedule=name, virtual_stages=v, pp=pp, microbatches=2 * pp), split


def small(split, **kw):
    kw = SMALL | kw
    return Scenario(layers=sum(split), stage_layers=",".join(map(str, split)), **kw)


@settings(max_examples=40, deadline=None)
@given(uneven(), st.booleans(), st.booleans(), st.booleans())
def test_any_valid_split_conserves_layers_and_parameters(case, gated, learned, tied):
    kw, split = case
    s = small(split, gated_mlp=gated, learned_positions=learned, tied_embeddings=tied, **kw)
    _, _, cost = prepare(s)
    stages = cost.sections["memory"]["per_stage"]
    assert sum(sum(st_["layers"]) for st_ in stages) == sum(split)
    # A tied head on another rank than the embedding keeps its own copy of the table
    # (Megatron-LM: word embeddings on the last stage, their gradients all-reduced).
    head_rank = [st_["stage"] for st_ in cost.sections["stage_balance"]["per_stage"] if st_["head"]]
    copy = SMALL["vocab"] * SMALL["hidden"] if tied and head_rank != [0] else 0
    total = cost.sections["compute"]["params_total"]
    assert sum(st_["params"] for st_ in stages) == total + copy
    assert cost.sections["stage_balance"]["split"] == split
    # Each virtual stage's count lands on the rank and chunk the schedule places it.
    assert [st_["layers"] for st_ in stages] == chunk_layers(split, s.schedule, s.pp)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.lists(st.integers(1, 7), min_size=6, max_size=6), st.data())
def test_moving_a_layer_off_the_slowest_stage_never_slows_1f1b(pp, counts, data):
    """Moving one layer off the only heaviest stage to one at least two layers lighter, which
    lowers the slowest stage, never lengthens 1F1B's predicted step once m >= 4p.

    Where it can: (a) the receiver ends as heavy as the giver was, so the slowest stage only
    moves, and fill and drain depend on where it sits ([3,4,3,3] -> [3,3,4,3]); (b) m < 4p,
    where 1F1B's critical path runs the last stage's work once per micro-batch at both ends
    (pp=2, m=2: [5,3] -> [4,4] is 7% slower). The step then pays for fill and drain, not for
    the steady state's pace (Narayanan et al. 2021 §2.2: (m + p - 1) slots of the slowest)."""
    split = counts[:pp]
    slow = max(range(pp), key=lambda k: split[k])
    assume(split.count(split[slow]) == 1)
    lighter = [k for k in range(pp) if split[k] <= split[slow] - 2]
    assume(lighter)
    to = data.draw(st.sampled_from(lighter))
    moved = list(split)
    moved[slow] -= 1
    moved[to] += 1
    kw = dict(pp=pp, microbatches=data.draw(st.sampled_from([4 * pp, 8 * pp])))
    before = prepare(small(split, **kw))[2].sections["step_time_s"]
    after = prepare(small(moved, **kw))[2].sections["step_time_s"]
    assert after <= before * (1 + 1e-12)


def test_a_balanced_split_is_faster_than_a_lopsided_one():
    kw = dict(pp=4, microbatches=8)
    lopsided = prepare(small([2, 10, 2, 2], **kw))[2].sections
    even = prepare(small([4, 4, 4, 4], **kw))[2].sections
    assert even["step_time_s"] < lopsided["step_time_s"]
    assert lopsided["stage_balance"]["slowest_stage"] == 1
    assert lopsided["stage_balance"]["imbalance"] > even["stage_balance"]["imbalance"]


@pytest.mark.parametrize("schedule,v", [("1f1b", 1), ("interleaved", 2)])
def test_llama3_405b_on_16_stages_evaluates_with_meta_s_split(schedule, v):
    s = Scenario(model="llama3-405b", tp=8, dp=1, pp=16, microbatches=16, schedule=schedule,
                 virtual_stages=v)  # fmt: skip
    view = evaluate(s)
    split = view["stage_balance"]["split"]
    assert len(split) == 16 * v and sum(split) == 126 == MODELS["llama3-405b"].layers
    assert split == default_split(126, 16 * v)
    # Dubey et al. 2024 §3.3.2: the first and the last stages are one layer short.
    assert split[0] == split[-1] == min(split) and max(split) - min(split) == 1
    assert view["step_time_s"] > 0
    per_rank = [sum(st_["layers"]) for st_ in view["memory"]["per_stage"]]
    assert sum(per_rank) == 126


def test_the_first_and_last_virtual_stages_carry_the_embedding_and_the_head():
    m = MODELS["llama3-8b"]
    hw, t = HARDWARE["h100-sxm"], Training()
    layout = Layout(dp=1, tp=2, pp=4)
    d, _ = durations.chunk_durations(m, hw, t, layout, 1, 3, [[8], [8], [8], [8]])
    embed_f, embed_w = durations.embedding_seconds(m, hw, t, layout)
    head_f = compute.head_seconds(m, hw, t, layout.tp)
    middle = d[1][0]
    assert d[2][0] == middle
    assert embed_f > 0 and embed_w > 0 and head_f > 0
    assert d[0][0].f == pytest.approx(middle.f + embed_f)
    assert d[0][0].w == pytest.approx(middle.w + embed_w)
    assert d[3][0].f == pytest.approx(middle.f + head_f)
    assert d[3][0].b == pytest.approx(middle.b + head_f)


@pytest.mark.parametrize("schedule,v,head", [("interleaved", 2, (3, 1)), ("zbv", 1, (0, 1))])
def test_with_several_chunks_only_the_end_chunks_carry_the_ends(schedule, v, head):
    """Interleaved: the head is on the last rank's last chunk; in a V it comes back to rank 0."""
    view = prepare(Scenario(dp=1, pp=4, schedule=schedule, virtual_stages=v, microbatches=8))[2]
    d = view.chunk_durations
    plain = d[1][0]
    ends = {(0, 0), head}
    for rank, row in enumerate(d):
        for chunk, x in enumerate(row):
            assert (x.f > plain.f * 1.0001) == ((rank, chunk) in ends), (rank, chunk)


def test_each_chunk_s_time_follows_its_own_layers():
    view = prepare(small([3, 1, 2, 6], pp=2, schedule="interleaved", virtual_stages=2,
                         microbatches=4))[2]  # fmt: skip
    # Placement: stage k on rank k % 2, chunk k // 2 -> rank 0 holds [3, 2], rank 1 [1, 6].
    d = view.chunk_durations
    per_layer_b = d[0][1].b / 2  # chunk (0, 1) holds 2 plain layers
    assert d[1][0].b == pytest.approx(per_layer_b)
    assert d[0][0].b == pytest.approx(3 * per_layer_b)
    assert d[1][1].f > d[0][1].f * 3  # 6 layers plus the head against 2 layers


def test_teaching_units_keep_their_numbers_under_any_split():
    base = dict(pp=4, dp=1, tp=1, microbatches=8, f_time=1, b_time=2)
    plain = evaluate(Scenario(**base))["timeline"]
    split = evaluate(Scenario(**base, stage_layers="5,11,11,5"))["timeline"]
    assert split["events"] == plain["events"] and split["makespan"] == plain["makespan"]
    assert split["bubble_fraction"] == plain["bubble_fraction"]


def test_stage_layers_round_trip_through_the_share_link():
    s = Scenario(pp=4, stage_layers=" 7, 9,9 ,7")
    q = s.query()
    assert q["stage_layers"] == "7,9,9,7"
    assert Scenario.model_validate(q) == s and s.layer_split == (7, 9, 9, 7)
    assert Scenario(pp=4, stage_layers=[7, 9, 9, 7]) == s


@pytest.mark.parametrize(
    "kw,field,words",
    [
        (dict(pp=4, stage_layers="8,8,8,7"), "stage_layers", "sum vs layers"),
        (dict(pp=4, stage_layers="16,16"), "stage_layers", "length vs pp*chunks"),
        (
            dict(pp=2, schedule="interleaved", virtual_stages=2, stage_layers="16,16"),
            "stage_layers",
            "length vs pp*chunks",
        ),  # fmt: skip
        (dict(pp=4, layers=3, hidden=256, heads=4), "pp", "at least pp*chunks"),
    ],
)
def test_a_split_that_does_not_fit_names_stage_layers_and_the_rule(kw, field, words):
    with pytest.raises(ScenarioError) as err:
        prepare(Scenario(**kw))
    assert err.value.field == field and words in err.value.reason


@pytest.mark.parametrize("text", ["8,0,8", "8,x,8", "8,,8", "8,-1", "8,5000", "9" * 40])
def test_an_entry_out_of_bounds_is_refused_by_the_field(text):
    with pytest.raises(ValueError, match="stage_layers"):
        Scenario(stage_layers=text)


def test_layers_need_not_divide_pp_times_v_any_more():
    view = evaluate(Scenario(pp=3, dp=1, schedule="interleaved", virtual_stages=2,
                             microbatches=6))  # fmt: skip
    assert view["stage_balance"]["split"] == default_split(32, 6)


def test_the_simulator_takes_durations_per_rank_and_chunk():
    actions = build("interleaved", 2, 4, 2)
    even = simulate("interleaved", actions, Durations(1, 2, 0, 0.1), 2)
    same = simulate("interleaved", actions, [[Durations(1, 2, 0, 0.1)] * 2] * 2, 2)
    assert same == even
    slow = [[Durations(1, 2, 0, 0.1), Durations(3, 6, 0, 0.1)], [Durations(1, 2, 0, 0.1)] * 2]
    longer = simulate("interleaved", actions, slow, 2)
    assert longer.makespan > even.makespan
    assert longer.busy[0] == pytest.approx(even.busy[0] + 4 * (2 + 4))
    with pytest.raises(ValueError, match="per rank and chunk"):
        per_chunk([[Durations()] * 3] * 2, 2, 2)


def test_peak_held_weights_in_flight_chunks_by_their_layers():
    actions = build("interleaved", 2, 4, 2)
    t = simulate("interleaved", actions, Durations(1, 2, 0, 0), 2)
    ones = peak_held("interleaved", t.events, [[1, 1], [1, 1]])
    assert ones == t.peak_inflight
    heavy = peak_held("interleaved", t.events, [[1, 5], [1, 5]])
    assert all(h > p for h, p in zip(heavy, t.peak_inflight, strict=True))
    assert all(h <= 5 * p for h, p in zip(heavy, t.peak_inflight, strict=True))


def test_uneven_chunks_on_a_rank_hold_the_activations_of_the_chunks_in_flight():
    s = small([1, 1, 7, 7], pp=2, schedule="interleaved", virtual_stages=2, microbatches=4)
    _, _, cost = prepare(s)
    rank0 = cost.sections["memory"]["per_stage"][0]
    per_layer = memory.activation_bytes_per_layer(specs.model_of(s), specs.training_of(s), 1)
    held = peak_held(s.schedule, cost.timeline.events, [[1, 7], [1, 7]])[0]
    assert rank0["activations_bytes"] == pytest.approx(per_layer * held)
    # Below the bound of every in-flight chunk being the rank's largest.
    assert held < cost.timeline.peak_inflight[0] * 7


def test_tp_bytes_follow_the_busiest_ranks_own_layers():
    shape = dict(dp=1, tp=2, pp=4, microbatches=8, layers=32, hidden=1024, heads=16)
    even = evaluate(Scenario(**shape))["comm"]["tp_bytes"]
    uneven = evaluate(Scenario(**shape, stage_layers="7,9,9,7"))["comm"]["tp_bytes"]
    assert uneven == pytest.approx(even * 9 / 8)  # the busiest rank runs 9 layers, not 8
