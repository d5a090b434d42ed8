"""Context (cp) and expert (ep) parallelism in the wire protocol (issue 25): RunInfo's cp and
ep fold as app.core.layout folds them, and a 3D run's hello and records read byte for byte
as before the fields existed, in the pydantic protocol and its msgspec twin alike."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from support import SHAPE, record_frame, records, run_info

from app.core.inputs import protocol_fast
from app.core.inputs.protocol import HelloFrame, ProbeRecord, RunInfo, oversize, parse_frame


def _info(**changes) -> RunInfo:
    base = run_info("cp-run", dp=2, tp=2, pp=2).model_dump() | {"model": SHAPE}
    return RunInfo.model_validate(base | changes)


def test_a_3d_run_info_and_record_have_no_cp_or_ep_in_their_json():
    info = run_info("plain", dp=2, tp=2, pp=2)
    dumped = json.loads(HelloFrame(rank=0, info=info).model_dump_json())
    assert "cp" not in dumped["info"] and "ep" not in dumped["info"]
    assert (info.cp, info.ep, info.world_size) == (1, 1, 8)
    for rec in records(info, 0):
        text = record_frame(rec)
        fast, oracle = protocol_fast.parse_record_frame(text), parse_frame(text).record
        assert (fast.coord.cp, oracle.coord.ep) == (0, 0)
        for stored in (protocol_fast.record_json(fast), oracle.model_dump_json(exclude_none=True)):
            assert set(json.loads(stored)["coord"]) == {"dp", "pp", "tp"}
            assert stored == protocol_fast.record_json(fast)


def test_cp_is_a_factor_of_the_world_and_ep_folds_inside_it():
    info = _info(cp=2, ep=4, order="tp-cp-ep-dp-pp")
    assert info.world_size == 16  # dp*tp*pp*cp; ep re-partitions tp*cp*dp (layout/mesh.py)
    dumped = json.loads(info.model_dump_json())
    assert (dumped["cp"], dumped["ep"], dumped["order"]) == (2, 4, "tp-cp-ep-dp-pp")
    assert RunInfo.model_validate_json(info.model_dump_json()) == info


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"order": "tp-cp-ep-dp-pp"}, "only in a run with cp or ep > 1"),
        ({"cp": 2, "order": "tp-cp-cp-dp-pp"}, "once each"),
        ({"cp": 2, "order": "tp-cp-xx-pp"}, "pattern"),
        ({"ep": 3}, "does not fold"),  # 3 does not divide tp*cp*dp = 4 (Megatron's rule)
        ({"cp": 0}, "greater than or equal to 1"),
        ({"ep": True}, "valid integer"),
        ({"cp": 65_537}, "less than or equal to 65536"),
    ],
)
def test_bad_cp_ep_or_order_is_refused_naming_why(changes, reason):
    with pytest.raises(ValidationError, match=reason):
        _info(**changes)


def test_oversize_names_cp_among_the_world_factors():
    info = _info(dp=256, tp=8, pp=8, cp=8, microbatches=1, steps=1)
    assert "dp*tp*pp*cp ranks = 131072" in oversize(info)
    assert oversize(run_info("big", dp=256, tp=8, pp=64, m=1, steps=1)).startswith(
        "info: dp*tp*pp ranks = 131072"
    )


def test_a_cp_coordinate_round_trips_through_both_decoders():
    info = run_info("coord", dp=1, tp=1, pp=2)
    rec = records(info, 0)[0]
    rec["coord"] |= {"cp": 1, "ep": 3}
    rec["events"].append({"kind": "cp", "start": 0.0, "end": 0.001})
    rec["events"].append({"kind": "ep", "start": 0.001, "end": 0.002})
    text = record_frame(rec)
    fast, oracle = protocol_fast.parse_record_frame(text), parse_frame(text).record
    assert protocol_fast.record_json(fast) == oracle.model_dump_json(exclude_none=True)
    stored = json.loads(protocol_fast.record_json(fast))
    assert stored["coord"] == {"dp": 0, "pp": 0, "tp": 0, "cp": 1, "ep": 3}
    assert [e["kind"] for e in stored["events"][-2:]] == ["cp", "ep"]
    assert ProbeRecord.model_validate_json(protocol_fast.record_json(fast)) == oracle
