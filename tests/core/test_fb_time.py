"""fb_time: one overlapped F&B pair's duration (DualPipe(V)), teaching units and seconds."""

from dataclasses import replace

import pytest
from pydantic import ValidationError

from app.core.cost import durations
from app.core.cost.overlap import overlapped_pair_s
from app.core.cost.shapes import as_held
from app.core.evaluate import evaluate, layout_of
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import hardware_of, model_of, training_of
from app.core.schedules import build
from app.core.schedules.pipeline import plan
from app.core.schedules.units import unit_plan
from app.core.simulate import Durations, simulate

TEACH = {"f_time": 1, "b_time": 1, "w_time": 1, "p2p_time": 0, "dp": 1, "tp": 1}


def _teach(schedule, pp=4, m=16, **extra):
    return evaluate(Scenario(schedule=schedule, pp=pp, microbatches=m, **TEACH, **extra))


@pytest.mark.parametrize("schedule", ["dualpipe", "dualpipev"])
def test_default_is_no_overlap_gain(schedule):
    plain = _teach(schedule)["timeline"]
    same = _teach(schedule, fb_time=3)["timeline"]  # F + B + W
    assert plain["makespan"] == same["makespan"]
    assert plain["events"] == same["events"]


@pytest.mark.parametrize("schedule", ["dualpipe", "dualpipev"])
@pytest.mark.parametrize("fb", [2.0, 2.5])
def test_each_overlapped_pair_lasts_fb_time_and_the_step_shortens(schedule, fb):
    pp, m = 4, 16
    t = simulate(schedule, build(schedule, pp, m, 2), Durations(1, 1, 1, 0, fb), 2)
    slow = simulate(schedule, build(schedule, pp, m, 2), Durations(1, 1, 1, 0), 2)
    by_rank = [[e for e in t.events if e.stage == r] for r in range(pp)]
    n_pairs = 0
    for rank, row in enumerate(build(schedule, pp, m, 2)):
        _, _, pairs = unit_plan(schedule, row, rank, pp)
        for first, last in pairs:
            events = by_rank[rank][first : last + 1]
            assert sum(e.end - e.start for e in events) == pytest.approx(fb)
            assert events[-1].end - events[0].start == pytest.approx(fb)  # back to back
        n_pairs += len(pairs)
    # Busy time drops by (3 - fb) per pair, and the step gets shorter.
    assert sum(t.busy) == pytest.approx(sum(slow.busy) - n_pairs * (3 - fb))
    assert t.makespan < slow.makespan


@pytest.mark.parametrize("schedule", ["dualpipe", "dualpipev"])
def test_the_query_parameter_reaches_the_simulator(schedule):
    faster = _teach(schedule, fb_time=2.5)["timeline"]
    want = simulate(schedule, build(schedule, 4, 16, 2), Durations(1, 1, 1, 0, 2.5), 2)
    assert faster["makespan"] == pytest.approx(want.makespan)
    assert faster["makespan"] < _teach(schedule)["timeline"]["makespan"]


def test_other_schedules_ignore_fb_time():
    assert _teach("1f1b", fb_time=2.5)["timeline"] == _teach("1f1b")["timeline"]


@pytest.mark.parametrize("fb", [1.5, 3.5])  # below max(F, B+W) = 2, above F+B+W = 3
def test_out_of_range_is_refused_naming_fb_time(fb):
    with pytest.raises(ScenarioError) as err:
        _teach("dualpipe", fb_time=fb)
    assert err.value.field == "fb_time" and "max(F, B+W) = 2" in err.value.reason


def test_fb_time_needs_teaching_units_and_a_positive_bounded_value():
    with pytest.raises(ScenarioError) as err:
        evaluate(Scenario(schedule="dualpipe", pp=2, microbatches=4, fb_time=2))
    assert err.value.field == "fb_time"
    for bad in (0, -1, 1e7, float("nan")):
        with pytest.raises(ValidationError) as v:
            Scenario(fb_time=bad)
        assert v.value.errors()[0]["loc"] == ("fb_time",)


def test_api_answers_422_naming_fb_time(client):
    q = "schedule=dualpipe&pp=2&microbatches=4&f_time=1&b_time=1&w_time=1&fb_time=9"
    r = client.get(f"/api/scenario?{q}")
    assert r.status_code == 422, r.text
    assert any(d["loc"][-1] == "fb_time" for d in r.json()["detail"])


def test_overlapped_pair_hides_each_sides_communication_under_the_others_compute():
    assert overlapped_pair_s(2.0, 0.5, 3.0, 0.5) == 5.0  # both hidden
    assert overlapped_pair_s(2.0, 4.0, 3.0, 0.0) == 6.0  # F's 4 s outlast B's 3 s compute
    assert overlapped_pair_s(1.0, 0.0, 1.0, 0.0) == 2.0  # nothing to hide: no gain


def _cost_chunks(tp, schedule="dualpipe"):
    s = Scenario(schedule=schedule, pp=4, microbatches=8, dp=1, tp=tp, hardware="h100-sxm")
    hw, t = hardware_of(s), training_of(s)
    m = as_held(model_of(s), tp, t.vocab_multiple)  # the padded vocabulary, as price runs it
    layout = layout_of(s, hw.gpus_per_node)
    pipe = plan(s.schedule, s.pp, s.virtual_stages, m.layers, s.layer_split)
    rows, _ = durations.chunk_durations(m, hw, t, layout, 2, 0, pipe.layers, pipe.ends, True)
    return s, rows


def test_cost_model_fb_hides_tp_collectives_and_is_no_gain_without_them():
    _, rows = _cost_chunks(tp=1)
    for row in rows:
        for c, d in enumerate(row):
            other = row[1 - c]
            assert d.fb == pytest.approx(d.f + other.b + other.w)
    _, rows = _cost_chunks(tp=8)
    for row in rows:
        for c, d in enumerate(row):
            other = row[1 - c]
            assert max(d.f, other.b + other.w) <= d.fb < d.f + other.b + other.w
    s, rows = _cost_chunks(tp=8)
    actions = build("dualpipe", 4, 8, 2)
    overlapped = simulate("dualpipe", actions, rows, 2).makespan
    apart = [[replace(d, fb=None) for d in row] for row in rows]
    assert overlapped < simulate("dualpipe", actions, apart, 2).makespan
    assert evaluate(s)["timeline"]["makespan"] == pytest.approx(overlapped)


def _moe_chunks(ep: int):
    q = dict(model="mixtral-8x7b", schedule="dualpipev", pp=2, microbatches=8, dp=8, tp=1)
    s = Scenario(**q, ep=ep, order="megatron-5d", hardware="h100-sxm", gpus_per_node=4)
    hw, t = hardware_of(s), training_of(s)
    m = as_held(model_of(s), 1, t.vocab_multiple, ep, s.routing_imbalance)
    layout = layout_of(s, hw.gpus_per_node)
    pipe = plan(s.schedule, s.pp, s.virtual_stages, m.layers, s.layer_split)
    rows, _ = durations.chunk_durations(m, hw, t, layout, 2, 0, pipe.layers, pipe.ends, True)
    return m, hw, t, layout, pipe, rows


def test_dualpipe_pairs_hide_the_moe_all_to_all_as_deepseek_describes():
    # DeepSeek-V3 report §3.2.1, Figure 4: in an overlapped F&B pair the dispatch and combine
    # of one chunk run under the other's computation. ep = 8 over two 4-GPU nodes: exposed.
    m, hw, t, layout, pipe, rows = _moe_chunks(ep=8)
    a2a = durations.layer_cost(m, hw, t, layout).a2a
    assert a2a > 0
    for row, layers in zip(rows, pipe.layers, strict=True):
        for c, d in enumerate(row):
            other, n, k = row[1 - c], layers[c], layers[1 - c]
            own, theirs = n * a2a, k * a2a  # one pass's all-to-alls in each chunk (no TP)
            assert d.fb == pytest.approx(
                overlapped_pair_s(d.f - own, own, other.b + other.w - theirs, theirs)
            )
            assert d.fb < d.f + other.b + other.w  # some of it hidden
    # Without experts to exchange, nothing to hide: the pair is the sum of its passes.
    *_, rows1 = _moe_chunks(ep=1)
    for row in rows1:
        for c, d in enumerate(row):
            assert d.fb == pytest.approx(d.f + row[1 - c].b + row[1 - c].w)
