"""ZB-H2 (Qi et al. 2024 §3.1) and the W pass's activation memory (their Table 1's M_W)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.cost import memory
from app.core.evaluate import evaluate
from app.core.inputs.models import MODELS
from app.core.inputs.scenario import Scenario
from app.core.inputs.training import Training
from app.core.schedules import Action, build
from app.core.simulate import Durations, simulate

UNIT = Durations(f=1.0, b=1.0, w=1.0, p2p=0.0)


def _span_idle(t, rank: int) -> float:
    """Idle time between a rank's first start and its last end: the paper's per-stage bubble
    once the optimizer step no longer waits for every stage (its §4 post-validation)."""
    ev = [e for e in t.events if e.stage == rank]
    return ev[-1].end - ev[0].start - t.busy[rank]


def test_zb_h2_is_figure_3s_order_on_the_first_and_last_stage():
    # Figure 3 (bottom), p=4, m=8, 1-based there: stage 1 runs F1..F7, B1 W1 F8, then B W
    # pairs; stage 4 runs F B pairs to B7, then W1 F8 B8 and W2..W8.
    rows = [[a.compact() for a in row] for row in build("zb-h2", 4, 8)]
    assert rows[0] == [f"F{i}" for i in range(7)] + ["B0", "W0", "F7"] + [
        x for i in range(1, 8) for x in (f"B{i}", f"W{i}")
    ]
    assert rows[3] == [x for i in range(7) for x in (f"F{i}", f"B{i}")] + ["W0", "F7", "B7"] + [
        f"W{i}" for i in range(1, 8)
    ]


@settings(max_examples=40, deadline=None)
@given(pp=st.integers(1, 10), extra=st.integers(0, 30))
def test_zb_h2_bubble_is_zero_at_equal_costs_and_stage_0_holds_2p_minus_1(pp, extra):
    m = 2 * pp - 1 + extra
    t = simulate("zb-h2", build("zb-h2", pp, m), UNIT)
    # §3.1: bubble (p-1)(T_F + T_B - 2T_W) = 0 at T_F = T_B = T_W: a parallelogram, each
    # stage busy from its first action to its last, stage i starting i forwards late.
    assert all(_span_idle(t, r) == 0 for r in range(pp))
    assert t.makespan == 3 * m + (pp - 1)
    # "2p-1 micro-batches in flight" on stage 0, two fewer per stage down.
    assert t.peak_inflight == [2 * (pp - 1 - i) + 1 for i in range(pp)]


@pytest.mark.parametrize("f,b,w", [(1.0, 2.0, 1.0), (1.0, 1.5, 0.5), (2.0, 1.0, 1.0)])
def test_zb_h2_first_stage_idles_p_minus_1_times_f_plus_b_minus_2w(f, b, w):
    pp, m = 4, 16
    t = simulate("zb-h2", build("zb-h2", pp, m), Durations(f, b, w, 0.0))
    assert _span_idle(t, 0) == pytest.approx((pp - 1) * (f + b - 2 * w))
    h1 = simulate("zb-h1", build("zb-h1", pp, m), Durations(f, b, w, 0.0))
    assert _span_idle(h1, 0) == pytest.approx((pp - 1) * (f + b - w))  # ZB-H1's, W more


@settings(max_examples=40, deadline=None)
@given(pp=st.integers(1, 8), m=st.integers(1, 24))
def test_zb_h2_runs_each_action_once_and_completes_at_any_size(pp, m):
    actions = build("zb-h2", pp, m)
    for row in actions:
        assert sorted(row) == sorted(Action(k, i) for k in "FBW" for i in range(m))
    t = simulate("zb-h2", actions, Durations(1.0, 2.0, 0.5, 0.3))
    assert len(t.events) == 3 * m * pp


# --- what a W still needs is held from its B on ---------------------------------------------


def _frontier(name, pp, m, v=1):
    t = simulate(name, build(name, pp, m, v), UNIT, v)
    return memory.held_frontier(t.events, [[1] * (2 if name == "zbv" else v)] * pp)


def test_zb_h1_holds_p_minus_i_forwards_and_i_w_passes_so_every_worker_peaks_near_p():
    # ZB-H1 defers each rank's W's by `rank` backwards (§3.1), so worker i holds p - i
    # forwards for their B and i backwards for their W: with M_W ~ M_B (Table 1), about p
    # on every worker, as the paper's "same peak memory as 1F1B" says.
    pp = 4
    front = _frontier("zb-h1", pp, 8)
    for i, row in enumerate(front):
        assert (pp - i, i) in row and max(f + w for f, w in row) == pp
    # Counting only forwards the last worker held 1: 75% low against p = 4.
    assert max(f for f, _ in front[-1]) == 1


def test_zb_h2_last_stage_holds_2p_minus_2_w_passes():
    front = _frontier("zb-h2", 4, 12)
    assert front[0] == [(7, 0), (6, 1)]
    assert front[-1] == [(1, 6), (0, 7)]


def test_w_share_is_table_1s_32_over_34_with_flash_attention_and_no_recompute():
    m = MODELS["tiny"]
    assert memory.w_pass_share(m, Training(), 1) == pytest.approx(32 / 34)
    assert memory.w_pass_share(m, Training(sequence_parallel=True), 4) == pytest.approx(32 / 34)
    # Full recompute keeps 2sbh from F to B, but B rebuilds the layer and W needs 32sbh.
    assert memory.w_pass_share(m, Training(recompute="full"), 1) == pytest.approx(16)


def _acts(schedule: str, **kw) -> list[float]:
    view = evaluate(Scenario(schedule=schedule, pp=4, microbatches=8, w_time=0.5, **kw))
    return [s["activations_bytes"] for s in view["memory"]["per_stage"]]


def test_zb_h1_activation_memory_counts_the_w_passes_and_1f1b_keeps_its_numbers():
    zb, one = _acts("zb-h1"), _acts("1f1b")
    per_mb = one[0] / 4  # 1F1B's first stage: 4 micro-batches of its layers in flight
    assert one[1:3] == pytest.approx([3 * per_mb, 2 * per_mb], rel=1e-12)  # unchanged: p - i
    # Worker i: (p - i) M_B + i M_W, M_W = 32/34 M_B (Table 1); 1F1B: (p - i) M_B.
    for i in range(4):
        assert zb[i] - one[i] == pytest.approx(i * per_mb * 32 / 34, rel=1e-9)


# --- the planner's closed forms ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["zb-h1", "zb-h2"]),
    pp=st.integers(1, 8),
    m=st.integers(1, 24),
    share=st.sampled_from([0.3, 32 / 34, 1.0, 16.0]),
)
def test_planner_frontier_peaks_where_the_simulated_order_does(name, pp, m, share):
    from app.core.evaluate.planner import Candidate, _frontier

    closed = _frontier(Candidate(1, 1, pp, name, 1, 1, 0, "none"), m, [[3]] * pp)
    t = simulate(name, build(name, pp, m), UNIT)
    exact = memory.held_frontier(t.events, [[3]] * pp)
    for c_row, e_row in zip(closed, exact, strict=True):
        peak = max(f + share * w for f, w in e_row)
        assert max(f + share * w for f, w in c_row) == pytest.approx(peak)


@settings(max_examples=60, deadline=None)
@given(
    pp=st.integers(1, 8),
    extra=st.integers(0, 20),
    f=st.sampled_from([0.5, 1.0, 2.0]),
    b=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    w=st.sampled_from([0.25, 1.0, 2.0]),
)
def test_planner_zb_h2_makespan_is_the_simulated_one(pp, extra, f, b, w):
    from app.core.evaluate.planner import Candidate, _makespan

    m, d = 2 * pp - 1 + extra, Durations(f, b, w, 0.0)
    t = simulate("zb-h2", build("zb-h2", pp, m), d)
    assert _makespan(Candidate(1, 1, pp, "zb-h2", 1, 1, 0, "none"), m, d) == pytest.approx(
        t.makespan
    )
