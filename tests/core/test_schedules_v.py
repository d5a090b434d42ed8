"""ZB-V and DualPipeV: torch's orders, completeness, and their bubble and memory."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.schedules import Action, ScheduleError, ScheduleName, build, virtual_stage
from app.core.simulate import Durations, simulate

UNIT = Durations(f=1.0, b=1.0, w=1.0, p2p=0.0)
TORCH_NAME = {"zbv": "ZBVZeroBubble", "dualpipev": "DualPipeV"}


def _min_m(name: str, pp: int) -> int:
    return 2 * pp if name == "dualpipev" else 1


@st.composite
def _sizes(draw):
    name = draw(st.sampled_from(["zbv", "dualpipev"]))
    pp = draw(st.integers(1, 16))
    return name, pp, draw(st.integers(_min_m(name, pp), 64))


# --- torch cross-check -----------------------------------------------------------------------

_KIND = {"FORWARD": "F", "BACKWARD_INPUT": "B", "BACKWARD_WEIGHT": "W"}


def _flatten(a) -> list[tuple[str, int, int]]:
    """One torch action as our (kind, microbatch, virtual stage) steps, comms and None dropped.

    OVERLAP_F_B is its sub-actions in torch's listed order. FULL_BACKWARD is B then W: one
    unsplit backward does the input grad and then the weight grad of the same micro-batch.
    """
    if a is None:
        return []
    kind = a.computation_type.name
    if kind == "OVERLAP_F_B":
        return [step for sub in a.sub_actions for step in _flatten(sub)]
    if kind == "FULL_BACKWARD":
        return [("B", a.microbatch_index, a.stage_index), ("W", a.microbatch_index, a.stage_index)]
    if kind in _KIND:
        return [(_KIND[kind], a.microbatch_index, a.stage_index)]
    return []


def _torch_order(name: str, pp: int, m: int) -> list[list[tuple[str, int, int]]]:
    vis = pytest.importorskip("torch.distributed.pipelining._schedule_visualizer")
    rows = vis.get_schedule_ops(TORCH_NAME[name], pp, m, 2)
    return [[step for a in row for step in _flatten(a)] for row in rows]


def _ours(name: str, pp: int, m: int) -> list[list[tuple[str, int, int]]]:
    return [
        [(a.kind, a.microbatch, virtual_stage(ScheduleName(name), r, a.chunk, pp)) for a in row]
        for r, row in enumerate(build(name, pp, m, 2))
    ]


def _as_actions(name: str, order: list[list[tuple[str, int, int]]]) -> list[list[Action]]:
    """Torch's order in our terms: virtual stage -> chunk on the V (s < p is chunk 0)."""
    pp = len(order)
    return [[Action(k, i, 0 if s < pp else 1) for k, i, s in row] for row in order]


CROSS = [(1, 1), (1, 4), (2, 1), (2, 3), (2, 4), (2, 8), (3, 2), (3, 5), (3, 7), (3, 12)]
CROSS += [(4, 1), (4, 3), (4, 7), (4, 8), (4, 11), (4, 16)]


@pytest.mark.parametrize("pp,m", CROSS)
def test_zbv_matches_torch_exactly(pp, m):
    assert _ours("zbv", pp, m) == _torch_order("zbv", pp, m)


@pytest.mark.parametrize(
    "pp,m",
    [(1, 2), (1, 5), (2, 4), (2, 5), (2, 9), (3, 6), (3, 7), (3, 11), (4, 8), (4, 13), (4, 16)],
)
def test_dualpipev_matches_torch_exactly(pp, m):
    assert _ours("dualpipev", pp, m) == _torch_order("dualpipev", pp, m)


@pytest.mark.parametrize("pp,m", [(1, 1), (2, 3), (4, 7)])
def test_dualpipev_needs_a_microbatch_per_virtual_stage_like_torch(pp, m):
    with pytest.raises(ScheduleError, match="2\\*pp") as err:
        build("dualpipev", pp, m, 2)
    assert err.value.field == "microbatches"
    with pytest.raises(ValueError, match="at least as many microbatches as stages"):
        _torch_order("dualpipev", pp, m)


@pytest.mark.parametrize("name", ["zbv", "dualpipev"])
def test_v_schedules_take_one_or_two_virtual_stages_only(name):
    assert build(name, 2, 4, 1) == build(name, 2, 4, 2)
    with pytest.raises(ScheduleError) as err:
        build(name, 2, 4, 3)
    assert err.value.field == "virtual_stages"


# --- every size --------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(size=_sizes())
def test_every_rank_runs_each_f_b_w_of_both_chunks_once_and_completes(size):
    name, pp, m = size
    actions = build(name, pp, m, 2)
    expected = {Action(k, i, c) for k in "FBW" for i in range(m) for c in (0, 1)}
    for row in actions:
        assert len(row) == len(expected) and set(row) == expected
    # The simulator raises DeadlockError if the order cannot complete; p2p time and uneven
    # costs change the start times but not which actions can start.
    t = simulate(name, actions, Durations(f=1.0, b=2.0, w=0.5, p2p=0.3), 2)
    assert len(t.events) == 6 * m * pp


# --- bubble and memory at F = B = W = 1 ---------------------------------------------------------


def test_zbv_bubble_matches_torchs_number_p8_m32():
    # shared/notes-torch-cpu.md: "ZBVZeroBubble, p=8, m=32, F=B=W=1: 3.65% over ideal".
    ours = simulate("zbv", build("zbv", 8, 32, 2), UNIT, 2)
    theirs = simulate("zbv", _as_actions("zbv", _torch_order("zbv", 8, 32)), UNIT, 2)
    assert ours.bubble_over_ideal == theirs.bubble_over_ideal == pytest.approx(0.0365, abs=5e-5)
    # 7 idle steps over 6*32 = 192 busy ones: the (p-1) warm-up skew of the V and no more.
    assert ours.makespan == 6 * 32 + 7


@settings(max_examples=80, deadline=None)
@given(size=_sizes())
def test_bubble_is_only_the_p_minus_1_skew_and_peak_memory_is_bounded(size):
    name, pp, m = size
    t = simulate(name, build(name, pp, m, 2), UNIT, 2)
    peak = t.peak_inflight
    if name == "zbv":
        # Qi et al. 2024 §6: ZB-V keeps 1F1B's peak activation memory, p full-stage
        # micro-batches = 2p chunk-microbatches. Reached once m >= 2p-1 fills the warm-up.
        assert max(peak) <= 2 * pp
        if m >= 2 * pp - 1:
            assert peak == [2 * pp] * pp
    else:
        # One chunk more than ZB-V: the overlapped F+B pair starts F before its B frees
        # memory (cf. DeepSeek-V3 Table 2, DualPipe "PP+1" against 1F1B's "PP").
        assert peak == [2 * pp + 1] * pp
    if m >= 2 * pp - 1:
        # ZB-V idles only for the warm-up skew, p-1 over 6m busy. DualPipeV sends an overlapped
        # pair's outputs when the pair ends (torch OVERLAP_F_B): DeepSeek-V3 Table 2's bubble
        # (p-1)(F&B + B - 3W), with B a whole backward and F&B = F + B: 2(p-1) at F = B = W.
        idle = pp - 1 if name == "zbv" else 2 * (pp - 1)
        assert t.makespan == 6 * m + idle
        assert t.bubble_over_ideal == pytest.approx(idle / (6 * m))


def test_dualpipev_p8_m32_takes_206_units_as_torchs_runtime_runs_it():
    # The figure: sending each half of a pair as it ends gave 199 (bubble 7).
    t = simulate("dualpipev", build("dualpipev", 8, 32, 2), UNIT, 2)
    assert t.makespan == 206
    assert t.makespan - max(t.busy) == 14
