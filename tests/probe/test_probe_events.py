"""The measured event stream holds exactly the schedule's actions, in order, on every rank.

Reuses the correctness launches (DP2 x TP2 x PP2, 3 steps) when run in the same session.
"""

import pytest
from probe_support import records
from test_probe_correctness import SCHEDULES, STEPS, mesh_args

from app.core.inputs.protocol import ProbeRecord
from app.core.schedules import (
    FORWARD_ONLY,
    MULTI_CHUNK,
    ScheduleName,
    build,
    chunks_per_rank,
    stage_location,
    stages_per_copy,
    virtual_stage,
)

pytestmark = [pytest.mark.probe, pytest.mark.timeout(240)]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_every_rank_reports_every_action_once_in_schedule_order(schedule, launches):
    run = launches(f"dp2tp2pp2-{schedule}", mesh_args(schedule))
    assert run.returncode == 0, run.output
    actions = build(schedule, 2, 4, _virtual_stages(schedule))
    recs = records(run.out)
    assert sorted((r["rank"], r["step"]) for r in recs) == [
        (rank, step) for rank in range(8) for step in range(STEPS)
    ]
    for rec in recs:
        ProbeRecord.model_validate(rec)  # the wire format accepts what the spool holds
        compute = sorted((e for e in rec["events"] if e["kind"] in "FBW"), key=lambda e: e["start"])
        listed = [(a.kind, a.microbatch, a.chunk) for a in actions[rec["coord"]["pp"]]]
        assert [(e["kind"], e["microbatch"], e["chunk"]) for e in compute] == listed
        for before, after in zip(compute, compute[1:], strict=False):
            assert before["end"] <= after["start"], (rec["rank"], before, after)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_communication_is_timed_where_it_happens(schedule, launches):
    run = launches(f"dp2tp2pp2-{schedule}", mesh_args(schedule))
    for rec in records(run.out):
        events = rec["events"]
        compute = [e for e in events if e["kind"] in "FBW"]
        kinds = [e["kind"] for e in events]
        # TP all-reduces run inside a forward or backward of the same microbatch and chunk.
        for tp in (e for e in events if e["kind"] == "tp"):
            assert any(
                c["start"] <= tp["start"] and tp["end"] <= c["end"]
                and (c["microbatch"], c["chunk"]) == (tp["microbatch"], tp["chunk"])
                for c in compute
            ), tp  # fmt: skip
        # Two blocks per stage, two all-reduces per block per forward (and per backward).
        forwards = sum(k == "F" for k in kinds)
        backwards = sum(k == "B" for k in kinds)
        # 4 layers over pp * chunks pipeline chunks (DualPipe: each copy's over pp)
        blocks = 4 // stages_per_copy(ScheduleName(schedule), 2, _chunks(schedule))
        assert kinds.count("tp") == 2 * blocks * (forwards + backwards)
        assert kinds.count("pp_recv") == _expected_receives(rec["coord"]["pp"], schedule)
        if ScheduleName(schedule) in FORWARD_ONLY:
            assert "dp" not in kinds and "optim" not in kinds
        else:
            assert kinds.count("dp") == 1 and kinds.count("optim") == 1
        assert all(e["end"] >= e["start"] >= 0 for e in events)


def _virtual_stages(schedule: str) -> int:
    return 2 if ScheduleName(schedule) in MULTI_CHUNK else 1


def _chunks(schedule: str) -> int:
    return chunks_per_rank(ScheduleName(schedule), _virtual_stages(schedule))


def _expected_receives(stage: int, schedule: str) -> int:
    """An F receives from the previous virtual stage, a B from the next one, when that stage
    lives on the other rank: virtual stage 0 embeds tokens, the last starts from its loss,
    and the V schedules hand chunk 0's output to chunk 1 on the same last rank."""
    name = ScheduleName(schedule)
    nvs = 2 * _chunks(schedule)
    run = stages_per_copy(name, 2, _chunks(schedule))  # DualPipe: nothing crosses its copies
    count = 0
    for a in build(schedule, 2, 4, _virtual_stages(schedule))[stage]:
        vs = virtual_stage(name, stage, a.chunk, 2)
        source = vs - 1 if a.kind == "F" else vs + 1 if a.kind == "B" else None
        if source is not None and 0 <= source < nvs and source // run == vs // run:
            count += stage_location(name, source, 2)[0] != stage
    return count


def test_dualpipev_pairs_send_their_forwards_output_only_when_the_pair_ends(launches):
    # torch's OVERLAP_F_B (and the simulator, app/core/schedules.release_units): an
    # overlapped pair's outputs leave after its last action, not when its forward ends.
    from app.core.schedules import release_units

    run = launches("dp2tp2pp2-dualpipev", mesh_args("dualpipev"))
    assert run.returncode == 0, run.output
    checked = 0
    for rec in records(run.out):
        pp = rec["coord"]["pp"]
        row = build("dualpipev", 2, 4, 2)[pp]
        ends = release_units(ScheduleName.dualpipev, row, pp == 1)
        compute = [e for e in rec["events"] if e["kind"] in "FBW"]  # in the row's order
        sends = [e for e in rec["events"] if e["kind"] == "pp_send"]
        for i, a in enumerate(row):
            vs = virtual_stage(ScheduleName.dualpipev, pp, a.chunk, 2)
            crosses = vs < 3 and stage_location(ScheduleName.dualpipev, vs + 1, 2)[0] != pp
            if a.kind != "F" or ends[i] == i or not crosses:
                continue
            mine = [s for s in sends if (s["microbatch"], s["chunk"]) == (a.microbatch, a.chunk)]
            first = min((s for s in mine if s["start"] >= compute[i]["start"]),
                        key=lambda s: s["start"])  # fmt: skip
            assert first["start"] >= compute[ends[i]]["end"], (rec["rank"], a)
            checked += 1
    assert checked > 0


def test_dualpipe_sends_when_dualpipe_py_posts_them(launches):
    # dualpipe.py queues a send and posts it at the next commit: after the last compute that
    # ran before the send call (app/core/schedules/dualpipe.py), e.g. after a whole pair.
    from app.core.schedules.units import unit_plan

    run = launches("dp2tp2pp2-dualpipe", mesh_args("dualpipe"))
    assert run.returncode == 0, run.output
    checked = 0
    for rec in records(run.out):
        pp = rec["coord"]["pp"]
        row = build("dualpipe", 2, 4, 2)[pp]
        release, _, _ = unit_plan(ScheduleName.dualpipe, row, pp, 2)
        compute = [e for e in rec["events"] if e["kind"] in "FBW"]  # in the row's order
        sends = [e for e in rec["events"] if e["kind"] == "pp_send"]
        for i, a in enumerate(row):
            mine = [s for s in sends if (s["microbatch"], s["chunk"]) == (a.microbatch, a.chunk)]
            later = [s for s in mine if s["start"] >= compute[i]["start"]]
            if a.kind == "W" or release[i] == i or not later:
                continue
            assert min(s["start"] for s in later) >= compute[release[i]]["end"], (rec["rank"], a)
            checked += 1
    assert checked > 0
