"""Teaching durations per pipeline stage or per virtual stage: f_time=1,1,1,1.5."""

import pytest
from pydantic import ValidationError

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.inputs.teaching import teaching_durations
from app.core.schedules import build, stage_location
from app.core.simulate import Durations, simulate

BASE = dict(dp=1, tp=1, pp=4, microbatches=8)


def _spans(view: dict, kind: str) -> dict[tuple[int, int], set[float]]:
    """(rank, chunk) -> the set of durations its `kind` actions were drawn with."""
    out: dict[tuple[int, int], set[float]] = {}
    for e in view["timeline"]["events"]:
        if e["kind"] == kind:
            out.setdefault((e["stage"], e["chunk"]), set()).add(round(e["end"] - e["start"], 9))
    return out


def test_a_list_per_pipeline_stage_times_each_rank_by_its_own_entry():
    view = evaluate(Scenario(**BASE, f_time="1,1,1,1.5", b_time="2,2,2,3"))
    assert _spans(view, "F") == {(0, 0): {1.0}, (1, 0): {1.0}, (2, 0): {1.0}, (3, 0): {1.5}}
    assert _spans(view, "B") == {(0, 0): {2.0}, (1, 0): {2.0}, (2, 0): {2.0}, (3, 0): {3.0}}


def test_a_list_per_virtual_stage_follows_model_order_through_the_chunk_placement():
    # Interleaved puts virtual stage vs on rank vs % p, chunk vs // p; the V on rank vs or 2p-1-vs.
    for schedule, m in (("interleaved", 4), ("zbv", 8), ("dualpipev", 8)):
        s = Scenario(dp=1, tp=1, pp=2, microbatches=m, schedule=schedule, virtual_stages=2,
                     f_time="1,2,3,4")  # fmt: skip
        spans = _spans(evaluate(s), "F")
        for vs, f in enumerate((1.0, 2.0, 3.0, 4.0)):
            assert spans[stage_location(s.schedule, vs, 2)] == {f}, (schedule, vs)


def test_b_defaults_to_f_entry_by_entry_and_w_to_zero():
    d = teaching_durations(Scenario(**BASE, f_time="1,2,3,4"))
    assert [row[0] for row in d] == [Durations(f, f, 0.0, 0.0) for f in (1.0, 2.0, 3.0, 4.0)]


def test_equal_single_values_keep_one_durations_and_the_same_numbers_as_before():
    one = Scenario(**BASE, f_time=1, b_time=2)
    assert teaching_durations(one) == Durations(1.0, 2.0, 0.0, 0.0)
    listed = Scenario(**BASE, f_time="1,1,1,1", b_time="2,2,2,2")
    a, b = evaluate(one)["timeline"], evaluate(listed)["timeline"]
    assert (a["makespan"], a["bubble_fraction"]) == (b["makespan"], b["bubble_fraction"])


def test_a_slow_last_stage_stretches_the_step_beyond_the_even_one():
    even = evaluate(Scenario(**BASE, f_time=1))["timeline"]
    slow = evaluate(Scenario(**BASE, f_time="1,1,1,1.5"))["timeline"]
    # 1F1B's steady state runs at the slowest stage's pace: m*(F+B) on stage 3 plus the ramp.
    assert slow["makespan"] >= 8 * 3.0 + 3 * 2.0
    assert slow["makespan"] > even["makespan"] and slow["bubble_fraction"] > even["bubble_fraction"]


def test_the_bubble_card_names_the_uneven_stages_instead_of_claiming_the_closed_form():
    card = evaluate(Scenario(**BASE, f_time="1,1,1,1.5"))["formulas"]["bubble"]
    assert card["simulated"]["v"] > card["closed"]["v"]
    assert [c["key"] for c in card["causes"]] == ["formulas.cause.uneven"]
    even = evaluate(Scenario(**BASE, f_time="1,1,1,1"))["formulas"]["bubble"]
    assert even["causes"] == [] and even["simulated"]["v"] == pytest.approx(even["closed"]["v"])


def test_the_share_link_round_trips_to_the_same_picture():
    s = Scenario(**BASE, f_time=" 1, 1 ,1,1.5", w_time="0,0,0,0.5", schedule="zb-h1")
    again = Scenario.model_validate(s.query())
    assert again == s and s.query()["f_time"] == "1.0,1.0,1.0,1.5"
    assert evaluate(again)["timeline"] == evaluate(s)["timeline"]


@pytest.mark.parametrize(
    "kw,field,words",
    [
        (dict(f_time="1,1,1"), "f_time", "pp = 4 (one per pipeline stage)"),
        (dict(f_time="1", b_time="1,2"), "b_time", "2 entries; allowed"),
        (dict(schedule="interleaved", virtual_stages=2, f_time="1,2,3"), "f_time",
         "pp*chunks = 4*2 = 8 (one per virtual stage)"),
        (dict(f_time="1,x,1,1"), "f_time", "entry 1 is not a number"),
        (dict(f_time="1,nan,1,1"), "f_time", "entry 1 is not a finite number"),
        (dict(f_time="1,0,1,1"), "f_time", "entry 1 is out of bounds"),
        (dict(f_time="1", w_time="0,-1,0,0"), "w_time", "entry 1 is out of bounds"),
        (dict(f_time="1,,1,1"), "f_time", "entry 1 is not a number"),
    ],
)  # fmt: skip
def test_a_bad_list_is_refused_naming_the_field_and_the_allowed_lengths(kw, field, words):
    with pytest.raises(ValidationError) as info:
        Scenario(**{**BASE, **kw})
    (err,) = info.value.errors()
    assert err["loc"] == (field,) and words in err["msg"]


def test_a_single_bad_number_keeps_pydantics_error_type():
    for value, kind in (("nan", "finite_number"), ("abc", "float_parsing"),
                        ("-1", "greater_than_equal"), ("2e6", "less_than_equal")):  # fmt: skip
        with pytest.raises(ValidationError) as info:
            Scenario(f_time=value)
        assert info.value.errors()[0]["type"] == kind


def test_durations_lists_reach_the_simulator_per_rank_and_chunk():
    s = Scenario(dp=1, tp=1, pp=2, microbatches=4, schedule="interleaved", virtual_stages=2,
                 f_time="1,2,3,4", b_time="1")  # fmt: skip
    d = teaching_durations(s)
    assert [[c.f for c in row] for row in d] == [[1.0, 3.0], [2.0, 4.0]]
    t = simulate(s.schedule, build(s.schedule, 2, 4, 2), d, 2)
    assert t.busy == [4 * (1 + 3) + 8 * 1, 4 * (2 + 4) + 8 * 1]
