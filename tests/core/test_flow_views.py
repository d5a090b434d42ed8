"""The flow and overview views' derived data: sends, steps, in-flight, order comparison."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.layout import orders
from app.core.layout.topology import Layout, seed_active_ranks
from app.core.views import flow

ALL = ["naive", "gpipe", "1f1b", "zb-h1", "interleaved"]
# The default model has 32 layers and 32 heads: sizes the core accepts for it.
PP = st.sampled_from([1, 2, 4, 8])


def view_of(schedule, pp, m, v=1, **kw):
    if schedule == "interleaved":
        v, m = max(v, 2), m * pp
    return evaluate(
        Scenario(schedule=schedule, pp=pp, microbatches=m, virtual_stages=v, f_time=1, **kw)
    )


@settings(max_examples=40, deadline=None)
@given(dp=st.integers(1, 3), tp=st.sampled_from([1, 2, 4]), pp=PP, m=st.integers(1, 8))
def test_active_ranks_per_step_are_the_articles_demo_for_the_naive_schedule(dp, tp, pp, m):
    view = evaluate(Scenario(dp=dp, tp=tp, pp=pp, microbatches=m, schedule="naive", f_time=1))
    layout = Layout(dp=dp, tp=tp, pp=pp)
    times = flow.frames(view["timeline"]["events"], [], pp)["times"]
    demo = seed_active_ranks(layout, m)
    assert times == [float(t) for t in range(len(demo) + 1)]
    for t, active in enumerate(demo):
        assert flow.active_ranks_at(view["layout"], view["timeline"]["events"], t) == active


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(ALL), pp=PP, m=st.integers(1, 8))
def test_inflight_step_function_peaks_at_the_simulators_peak(name, pp, m):
    view = view_of(name, pp, m, w_time=0.5 if name == "zb-h1" else None)
    steps = flow.inflight_steps(name, view["timeline"]["events"], pp)
    assert [max(n for _, n in s) for s in steps] == view["timeline"]["peak_inflight"]
    assert all(s[-1][1] == 0 for s in steps), "every activation is released by the end"


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(ALL), pp=PP, m=st.integers(1, 8))
def test_bubble_so_far_ends_at_the_timelines_bubble(name, pp, m):
    view = view_of(name, pp, m, b_time=2.0)
    f = flow.frames(view["timeline"]["events"], [], pp)
    assert f["times"] == sorted(set(f["times"])) and f["times"][0] == 0.0
    assert all(0.0 <= b <= 1.0 + 1e-12 for b in f["bubble_so_far"])
    assert f["bubble_so_far"][-1] == pytest.approx(view["timeline"]["bubble_fraction"])


@pytest.mark.parametrize(
    ("name", "v", "per_direction"),
    [("naive", 1, None), ("gpipe", 1, 3), ("1f1b", 1, 3), ("zb-h1", 1, 3), ("interleaved", 2, 7)],
)
def test_every_hand_off_between_ranks_is_one_send(name, v, per_direction):
    pp, m = 4, 4
    view = view_of(name, pp, m, v)
    m = view["schedule"]["microbatches"]
    links = flow.sends(name, view["timeline"]["events"], pp, v)
    forward = [s for s in links if s["kind"] == "F"]
    backward = [s for s in links if s["kind"] == "B"]
    # p*v virtual stages have p*v - 1 boundaries, each crossed once per micro-batch each way.
    assert len(forward) == m * (pp * v - 1)
    assert len(backward) == (0 if name == "naive" else m * per_direction)
    assert all(s["recv"] >= s["send"] and s["src_stage"] != s["dst_stage"] for s in links)


def test_a_tail_extends_the_steps_but_not_the_pipeline_bubble():
    view = view_of("1f1b", 2, 2)
    end = view["timeline"]["makespan"]
    tail = [{"stage": 0, "kind": "dp", "microbatch": 0, "chunk": 0, "start": end, "end": end + 3}]
    f = flow.frames(view["timeline"]["events"], tail, 2)
    assert f["times"][-1] == end + 3
    assert f["bubble_so_far"][-1] == pytest.approx(view["timeline"]["bubble_fraction"])


@pytest.mark.parametrize("sizes", [(2, 2, 2, 8), (4, 2, 2, 4), (8, 8, 4, 8), (3, 5, 2, 4)])
def test_order_comparison_agrees_with_the_layouts_node_crossings(sizes):
    dp, tp, pp, gpn = sizes
    for row in orders.compare(dp, tp, pp, gpn):
        order = tuple(row["order"].split("-"))
        layout = Layout(dp=dp, tp=tp, pp=pp, order=order, gpus_per_node=gpn)
        for axis in ("tp", "pp", "dp"):
            assert row["crosses_node"][axis] == layout.crosses_node(axis)
            worst = max(len({layout.node(r) for r in g}) for g in layout.groups(axis))
            assert row["nodes_spanned"][axis] == worst


def test_tp_first_keeps_a_node_sized_tp_group_inside_one_node():
    rows = {r["order"]: r for r in orders.compare(dp=4, tp=8, pp=4, gpus_per_node=8)}
    assert rows["tp-pp-dp"]["nodes_spanned"]["tp"] == 1
    assert rows["tp-dp-pp"]["presets"] == ["deepspeed", "megatron", "torchtitan"]
    assert rows["dp-pp-tp"]["nodes_spanned"]["tp"] == 8
