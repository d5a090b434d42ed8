"""ZB-H2's step is the steady state of back-to-back steps (Qi et al. 2024 §4 post-validation:
step k+1's warm-up runs during step k's drain); every other schedule's step is one step alone.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.schedules import Action, build
from app.core.simulate import Durations, simulate, steady
from app.core.views.step_period import step_period

UNIT = Durations(f=1.0, b=1.0, w=1.0, p2p=0.0)


def _steps(actions: list[list[Action]], n: int) -> list[list[Action]]:
    """The reference: each rank's whole order n times, step k's micro-batches numbered k*m on."""
    m = 1 + max(a.microbatch for row in actions for a in row)
    return [
        [a._replace(microbatch=a.microbatch + k * m) for k in range(n) for a in row]
        for row in actions
    ]


def _start_gaps(actions, durations, n: int) -> list[float]:
    """Per pair of consecutive steps among n simulated whole, the slowest rank's start gap."""
    m = 1 + max(a.microbatch for row in actions for a in row)
    t = simulate("zb-h2", _steps(actions, n), durations)
    gaps = []
    for k in range(1, n):
        gaps.append(
            max(
                st[len(row) // n * k] - st[len(row) // n * (k - 1)]
                for row, st in zip(t.actions, t.starts, strict=True)
            )
        )
        assert all(row[len(row) // n * k].microbatch == k * m for row in t.actions)
    return gaps


def test_zb_h2_p4_m8_equal_costs_runs_a_step_every_24_units_against_27_alone():
    actions = build("zb-h2", 4, 8)
    assert simulate("zb-h2", actions, UNIT).makespan == 27  # one step alone, as ZB-H1
    assert steady.period("zb-h2", actions, UNIT) == 24  # = every rank's busy time: no bubble
    assert simulate("zb-h1", build("zb-h1", 4, 8), UNIT).makespan == 27


@settings(max_examples=30, deadline=None)
@given(
    pp=st.integers(1, 6),
    m=st.integers(1, 14),
    f=st.sampled_from([0.5, 1.0, 2.0]),
    b=st.sampled_from([0.5, 1.0, 2.0]),
    w=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    p2p=st.sampled_from([0.0, 0.25]),
)
def test_the_one_step_shortcut_is_what_whole_steps_give_and_a_third_step_repeats_it(
    pp, m, f, b, w, p2p
):
    actions = build("zb-h2", pp, m)
    d = Durations(f=f, b=b, w=w, p2p=p2p)
    period = steady.period("zb-h2", actions, d)
    gaps = _start_gaps(actions, d, 3)
    assert period == pytest.approx(gaps[0]) and gaps[1] == pytest.approx(gaps[0])
    # A rank cannot start its next step before its own work is done, nor later than a
    # makespan after this one started (what waiting for the whole step would give).
    one = simulate("zb-h2", actions, d)
    assert max(one.busy) - 1e-9 <= period <= one.makespan + 1e-9


@pytest.mark.parametrize(("pp", "m"), [(2, 8), (4, 8), (4, 16), (8, 16)])
def test_at_equal_costs_and_m_at_least_2p_minus_1_the_steady_bubble_is_zero(pp, m):
    # Qi et al. §3.1: ZB-H2's bubble (p-1)(F+B-2W) is 0 at F = B = W once m >= 2p-1.
    actions = build("zb-h2", pp, m)
    shown = simulate("zb-h2", actions, UNIT)
    view = step_period("zb-h2", actions, shown, UNIT, 1, "u")
    assert view["period"] == 3 * m and view["bubble_fraction"] == pytest.approx(0.0)
    assert view["single_step"] == shown.makespan > view["period"]


def test_the_view_says_which_figure_it_is():
    actions = build("zb-h2", 4, 8)
    view = step_period("zb-h2", actions, simulate("zb-h2", actions, UNIT), UNIT, 1, "u")
    assert view["shown"] == "steady_state" and view["key"] == "step_period.steady_state"
    assert "Qi et al. 2024 §4 post-validation" in view["label"]
    assert view["args"] == [{"v": 24.0, "u": "u"}, {"v": 27.0, "u": "u"}, view["args"][2]]
    assert view["single_step_bubble_fraction"] == pytest.approx(3 / 27)


@pytest.mark.parametrize("name", ["zb-h1", "1f1b", "gpipe"])
def test_schedules_that_wait_at_the_step_boundary_show_one_step(name):
    actions = build(name, 4, 8)
    shown = simulate(name, actions, UNIT)
    view = step_period(name, actions, shown, UNIT, 1, "u")
    assert view["shown"] == "single_step" and view["period"] == shown.makespan
    assert view["bubble_fraction"] == pytest.approx(shown.bubble_fraction)


def test_evaluate_carries_both_figures_in_teaching_units_and_in_seconds():
    q = {"schedule": "zb-h2", "pp": 4, "microbatches": 8}
    taught = evaluate(Scenario(**q, f_time=1, b_time=1, w_time=1))["timeline"]
    assert taught["step_period"]["period"] == 24 and taught["step_period"]["single_step"] == 27
    assert taught["makespan"] == 27
    priced = evaluate(Scenario(**q))["timeline"]
    sp = priced["step_period"]
    assert sp["single_step"] == priced["makespan"] and 0 < sp["period"] < sp["single_step"]
    assert sp["args"][0]["u"] == "s"
