"""app.core.fidelity.measured: each rank's step adds up, the bubble splits into causes, and a run
that behaves exactly as simulated has zero residuals."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import records, run_info

from app.core.fidelity import measured
from app.core.inputs.protocol import Coord, ProbeEvent, ProbeRecord
from app.live import analysis


def _record(events, rank=0, pp=0, step=0, t0=100.0) -> ProbeRecord:
    return ProbeRecord(
        run="m", rank=rank, coord=Coord(dp=0, pp=pp, tp=0), node=0, step=step, t0=t0,
        events=[ProbeEvent(**e) for e in events],
    )  # fmt: skip


def test_nested_tp_counts_as_tp_and_pp_send_counts_as_nothing():
    b = measured.breakdown(
        _record([
            {"kind": "pp_recv", "start": 0.0, "end": 1.0},
            {"kind": "F", "microbatch": 0, "chunk": 0, "start": 1.0, "end": 3.0},
            {"kind": "tp", "microbatch": 0, "chunk": 0, "start": 2.5, "end": 3.0},
            {"kind": "pp_send", "start": 3.0, "end": 6.0, "peer": 1},
            {"kind": "dp", "start": 4.0, "end": 5.0},
            {"kind": "optim", "start": 5.0, "end": 5.5},
        ])
    )  # fmt: skip
    assert b.step_time_s == 5.5
    assert (b.pp_wait_s, b.compute_s, b.tp_s, b.dp_s, b.host_s) == (1.0, 2.0, 0.5, 1.0, 1.0)
    assert b.idle_frac == pytest.approx(2.0 / 5.5)
    assert b.comm_frac == pytest.approx(1.5 / 5.5)


interval = st.tuples(
    st.sampled_from(["F", "B", "W", "tp", "pp_recv", "pp_send", "dp", "optim", "cp", "ep"]),
    st.floats(0, 10, allow_nan=False),
    st.floats(0, 5, allow_nan=False),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(interval, max_size=30))
def test_the_parts_always_add_up_to_the_step(items):
    events = [{"kind": k, "start": s, "end": s + d} for k, s, d in items]
    b = measured.breakdown(_record(events))
    parts = b.compute_s + b.tp_s + b.cp_s + b.ep_s + b.dp_s + b.pp_wait_s + b.host_s
    assert math.isclose(parts, b.step_time_s, rel_tol=1e-9, abs_tol=1e-9)
    assert min(b.compute_s, b.tp_s, b.cp_s, b.ep_s, b.dp_s, b.pp_wait_s, b.host_s) >= 0
    if not any(k in ("cp", "ep") for k, _, _ in items):
        assert b.cp_s == b.ep_s == 0.0


def test_cp_and_ep_sit_inside_compute_like_tp_with_their_own_seconds():
    """tp > cp > ep > dp (Megatron's axis order): where a tp pulse overlaps a cp exchange the
    instant is tp's, and an ep all-to-all inside B is ep's; the seven parts add up to T."""
    b = measured.breakdown(
        _record([
            {"kind": "F", "microbatch": 0, "chunk": 0, "start": 0.0, "end": 2.0},
            {"kind": "cp", "start": 0.5, "end": 1.5},
            {"kind": "tp", "microbatch": 0, "chunk": 0, "start": 1.25, "end": 1.75},
            {"kind": "B", "microbatch": 0, "chunk": 0, "start": 2.0, "end": 4.0},
            {"kind": "ep", "start": 2.5, "end": 3.0},
            {"kind": "dp", "start": 4.0, "end": 4.5},
            {"kind": "ep", "start": 4.25, "end": 4.75},
        ])
    )  # fmt: skip
    assert b.step_time_s == 4.75
    assert (b.tp_s, b.cp_s, b.ep_s, b.dp_s) == (0.5, 0.75, 1.0, 0.25)  # ep beats dp
    assert (b.compute_s, b.pp_wait_s, b.host_s) == (2.25, 0.0, 0.0)
    assert b.comm_frac == pytest.approx(2.5 / 4.75)
    split = measured.causes(b, 0.0, measured.CAUSES_CP_EP)
    assert (split["cp"], split["ep"]) == (0.75, 1.0)
    assert "cp" not in measured.causes(b, 0.0)  # a 3D run's causes are the five they were


def test_causes_charge_the_schedule_only_for_its_predicted_idle():
    b = measured.breakdown(
        _record([{"kind": "pp_recv", "start": 0.0, "end": 3.0},
                 {"kind": "F", "microbatch": 0, "chunk": 0, "start": 3.0, "end": 4.0}])
    )  # fmt: skip
    split = measured.causes(b, predicted_idle_s=1.0)
    assert split == {"schedule": 1.0, "pp_peers": 2.0, "tp": 0.0, "dp": 0.0, "host": 0.0}
    assert sum(split.values()) == pytest.approx(b.step_time_s - b.compute_s)


def test_stage_durations_are_means_and_the_fastest_receive():
    info = run_info("m", pp=2, m=4)
    recs = [ProbeRecord.model_validate(r) for r in records(info, 0, f=0.01, b=0.02)]
    d = measured.stage_durations(recs, 2)
    assert d[0].f == pytest.approx(0.01) and d[1].b == pytest.approx(0.02)
    assert d[1].p2p == pytest.approx(0.001) and d[0].w == 0.0


def test_a_missing_stage_borrows_the_mean_of_the_others():
    info = run_info("m", pp=2, m=4)
    recs = [ProbeRecord.model_validate(r) for r in records(info, 0) if r["coord"]["pp"] == 0]
    d = measured.stage_durations(recs, 2)
    assert d[1] == d[0]


@pytest.mark.parametrize("schedule,v", [("1f1b", 1), ("gpipe", 1), ("interleaved", 2)])
def test_a_run_that_matches_the_simulation_has_zero_residuals(schedule, v):
    info = run_info("m", dp=2, tp=2, pp=2, schedule=schedule, m=4, v=v)
    recs = [ProbeRecord.model_validate(r) for r in records(info, 3, t0=50.0)]
    a = analysis.analyse(info, recs, 3)
    assert a["complete"] and a["ranks_present"] == 8
    assert a["residuals"]["actions"]
    assert max(abs(r["end_s"]) for r in a["residuals"]["actions"]) < 1e-9
    assert a["measured"]["pipeline_s"] == pytest.approx(a["predicted"]["makespan_s"])


def test_a_straggler_shows_in_the_heatmap_and_as_peer_waiting():
    info = run_info("m", dp=2, tp=1, pp=2, m=4)
    recs = [ProbeRecord.model_validate(r) for r in records(info, 0, t0=0.0, slow_rank=1)]
    a = analysis.analyse(info, recs, 0)
    times = a["heatmap"]["metrics"]["step_time_s"]
    ranks = a["heatmap"]["ranks"]
    slowest = max((t, ranks[i][j]) for i, row in enumerate(times) for j, t in enumerate(row))
    assert slowest[1] == 1
    assert len(a["measured"]["links"]) > 0
    assert set(a["bubble"]["causes"]) == set(measured.CAUSES)


def test_advice_fires_on_measured_shares():
    info = run_info("m", dp=1, tp=2, pp=2, m=2)
    layout = analysis.layout_of(info)
    heavy_tp = measured.RankBreakdown(
        rank=0, stage=0, step=0, attempt=0, step_time_s=1.0, compute_s=0.2, tp_s=0.5,
        dp_s=0.0, pp_wait_s=0.3, host_s=0.0,
    )  # fmt: skip
    rules = [a["rule"] for a in analysis.advice_json(info, layout, [heavy_tp])]
    assert rules == ["tp_comm", "bubble"]  # TP 50% > 30%; waiting for peers 30% > 20%
    assert analysis.advice_json(info, layout, []) == []


def test_step_zero_is_left_out_of_the_means_when_later_steps_exist():
    info = run_info("m", pp=2, m=4)
    slow = [ProbeRecord.model_validate(r) for r in records(info, 0, f=0.05)]
    steady = [ProbeRecord.model_validate(r) for r in records(info, 1, f=0.01)]
    assert analysis.warm(slow + steady) == steady
    assert analysis.warm(slow) == slow
    a = analysis.analyse(info, slow + steady, 1)
    assert a["durations"][0]["f"] == pytest.approx(0.01)
