"""The simulator against the closed forms the papers give at equal unit costs."""

from fractions import Fraction
from itertools import pairwise

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.core.layout.topology import Layout, seed_active_ranks
from app.core.schedules import Action, build
from app.core.schedules.deadlock import DeadlockError
from app.core.simulate import Durations, simulate

UNIT = Durations(f=1.0, b=1.0, w=0.0, p2p=0.0)
sizes = dict(pp=st.integers(1, 16), m=st.integers(1, 64))


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(["gpipe", "1f1b"]), **sizes)
def test_gpipe_and_1f1b_bubble_is_p_minus_1_over_m_plus_p_minus_1(name, pp, m):
    t = simulate(name, build(name, pp, m), UNIT)
    # Narayanan et al. 2021 §2.2.1: bubble fraction (p-1)/(m+p-1); over ideal (p-1)/m.
    assert t.bubble_fraction == pytest.approx((pp - 1) / (m + pp - 1))
    assert t.bubble_over_ideal == pytest.approx((pp - 1) / m)
    assert t.makespan == pytest.approx(2 * (m + pp - 1))


@settings(max_examples=60, deadline=None)
@given(pp=st.integers(1, 8), k=st.integers(1, 6), v=st.integers(2, 4))
def test_interleaved_bubble_is_p_minus_1_over_vm_plus_p_minus_1(pp, k, v):
    m = k * pp
    t = simulate("interleaved", build("interleaved", pp, m, v), UNIT, v)
    # Narayanan et al. 2021 §2.2.2: the bubble shrinks by v: (p-1)/(v*m + p-1).
    assert t.bubble_fraction == pytest.approx((pp - 1) / (v * m + pp - 1))


@settings(max_examples=80, deadline=None)
@given(
    pp=st.integers(1, 12),
    m=st.integers(1, 48),
    f=st.sampled_from([1.0, 2.0, 1.5]),
    b=st.sampled_from([1.0, 1.5, 2.0]),
    w_frac=st.sampled_from([0.25, 0.5, 0.7, 1.0]),
)
def test_zb_h1_bubble_is_p_minus_1_times_f_plus_b_minus_w(pp, m, f, b, w_frac):
    assume(m >= pp)
    w = w_frac * min(f, b)
    t = simulate("zb-h1", build("zb-h1", pp, m), Durations(f, b, w, 0.0))
    # Qi et al. 2024 §3.1: ZB-H1 idles (p-1)(T_F + T_B - T_W) per rank (with T_W <= T_F, T_B).
    for busy in t.busy:
        assert t.makespan - busy == pytest.approx((pp - 1) * (f + b - w))


@settings(max_examples=60, deadline=None)
@given(**sizes)
def test_peak_inflight_1f1b_is_min_p_minus_i_and_m_and_gpipe_is_m(pp, m):
    one = simulate("1f1b", build("1f1b", pp, m), UNIT)
    assert one.peak_inflight == [min(pp - i, m) for i in range(pp)]
    gp = simulate("gpipe", build("gpipe", pp, m), UNIT)
    assert gp.peak_inflight == [m] * pp


def test_interleaved_matches_torchs_numbers_p4_v2_m8():
    # shared/notes-torch-cpu.md: torch's Interleaved1F1B, p=4, m=8, v=2: makespan 38,
    # bubble 3/19, peak in-flight 11, 9, 7, 5.
    t = simulate("interleaved", build("interleaved", 4, 8, 2), UNIT, 2)
    assert t.makespan == 38
    assert Fraction(t.bubble_fraction).limit_denominator(100) == Fraction(3, 19)
    assert t.peak_inflight == [11, 9, 7, 5]


def test_naive_reproduces_the_seed_active_gpus_per_step():
    layout = Layout(dp=2, tp=2, pp=2)
    t = simulate("naive", build("naive", 2, 4), Durations(1, 0, 0, 0))
    active = [
        sorted(
            r for e in t.events if e.start <= step < e.end for r in layout.ranks_of_stage(e.stage)
        )
        for step in range(5)
    ]
    assert active == seed_active_ranks(layout, 4)


def test_p2p_time_delays_each_hop():
    t = simulate("gpipe", build("gpipe", 3, 1), Durations(1, 1, 0, 0.5))
    # F on 3 stages + 2 hops, then B back through 3 stages + 2 hops.
    assert t.makespan == pytest.approx(3 + 1 + 3 + 1)


def test_events_on_a_rank_never_overlap_and_respect_dependencies():
    t = simulate("interleaved", build("interleaved", 4, 8, 2), Durations(1, 2, 0, 0.1), 2)
    for rank in range(4):
        ev = sorted((e for e in t.events if e.stage == rank), key=lambda e: e.start)
        assert all(a.end <= b.start + 1e-12 for a, b in pairwise(ev))


def test_a_schedule_that_cannot_complete_names_the_stuck_actions():
    bad = [[Action("B", 0), Action("F", 0)], [Action("F", 0), Action("B", 0)]]
    with pytest.raises(DeadlockError, match="rank 0: B0"):
        simulate("gpipe", bad, UNIT)


def test_per_rank_durations_make_the_slow_stage_the_bottleneck():
    fast, slow = Durations(1, 1, 0, 0), Durations(3, 3, 0, 0)
    t = simulate("1f1b", build("1f1b", 2, 8), [fast, slow])
    assert t.makespan >= 8 * 6
