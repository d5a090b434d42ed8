"""Kineto trace -> RankTrace (app/core/traces/kineto.py), on real traces: HTA's published
DDP/NCCL trace and the gloo dp=2 x pp=2 trace written by tests/fixtures/traces."""

import gzip
import json
from pathlib import Path

import pytest

from app.core.traces import TraceError, parse_rank

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


def load(rel: str) -> dict:
    with gzip.open(TRACES / rel, "rb") as f:
        return json.load(f)


def kinds(step) -> list[str]:
    return [s.kind for s in step.spans]


def test_nccl_ddp_trace_gives_steps_phases_and_grouped_collectives():
    t = parse_rank(load("hta/nccl_data.json.gz"), "nccl_data")
    assert (t.rank, t.world, t.device, t.dtype) == (0, 2, "cuda", "fp32")
    assert [s.step for s in t.steps] == [4, 5, 6]
    for step in t.steps:
        # One forward and one backward range (DDP.forward nested in "## forward ##" is one),
        # zero_grad and step as optim, and the step's 7 NCCL kernels (2 broadcasts in the
        # forward, 5 gradient all-reduces in the backward).
        assert kinds(step).count("F") == 1 and kinds(step).count("B") == 1
        assert kinds(step).count("optim") == 2
        colls = [s for s in step.spans if s.kind == "coll"]
        assert sorted(s.op for s in colls) == ["allreduce"] * 5 + ["broadcast"] * 2
        assert {s.group for s in colls} == {(0, 1)}
        fwd = next(s for s in step.spans if s.kind == "F")
        assert all(fwd.start_us <= s.start_us <= fwd.end_us for s in colls if s.op == "broadcast")
    assert t.groups == frozenset({(0, 1)})


def test_a_device_collective_is_exposed_only_where_no_compute_kernel_ran():
    t = parse_rank(load("hta/nccl_data.json.gz"), "nccl_data")
    for step in t.steps:
        colls = [s for s in step.spans if s.kind == "coll"]
        full = sum(s.end_us - s.start_us for s in colls)
        exposed = sum(b - a for s in colls for a, b in s.exposed)
        assert all(s.start_us <= a < b <= s.end_us for s in colls for a, b in s.exposed)
        # DDP's all-reduces run beside the backward's kernels: part of them is hidden.
        assert 0 < exposed < full


def test_gloo_trace_gives_named_actions_peers_and_process_groups():
    t = parse_rank(load("gloo_dp2_pp2/rank1_trace.json.gz"), "rank1")
    assert (t.rank, t.world, t.device) == (1, 4, "cpu")
    assert [s.step for s in t.steps] == [1, 2, 3]
    step = t.steps[0]
    compute = [(s.kind, s.microbatch) for s in step.spans if s.kind in "FBW"]
    assert compute == [("F", 0), ("F", 1), ("B", 1), ("B", 0)]  # GPipe: all F, then all B
    # Stage 1 receives activations from rank 0 in each F and sends gradients back in each B.
    recvs = [s for s in step.spans if s.kind == "recv"]
    sends = [s for s in step.spans if s.kind == "send"]
    assert [s.peer for s in recvs] == [0, 0] and [s.peer for s in sends] == [0, 0]
    f0 = step.spans[[s.kind for s in step.spans].index("F")]
    assert f0.start_us <= recvs[0].start_us < f0.end_us
    assert [s.op for s in step.spans if s.kind == "coll"] == ["all_reduce", "all_reduce"]
    assert (1, 3) in t.groups  # the DP group, from distributedInfo.pg_config


def test_a_trace_without_distributed_info_is_refused_naming_it():
    doc = load("hta/distributed_info_not_found.json.gz")
    with pytest.raises(TraceError, match=r"^hta/no_info\.json\.gz: has no distributedInfo"):
        parse_rank(doc, "hta/no_info.json.gz")


def test_a_rank_outside_its_world_or_not_an_integer_is_refused():
    doc = load("gloo_dp2_pp2/rank0_trace.json.gz")
    doc["distributedInfo"]["rank"] = 4
    with pytest.raises(TraceError, match="r9.json: distributedInfo has rank 4 outside world"):
        parse_rank(doc, "r9.json")
    doc["distributedInfo"]["rank"] = "0"
    with pytest.raises(TraceError, match="has no distributedInfo.rank"):
        parse_rank(doc, "r9.json")


def test_json_that_is_not_a_trace_and_a_trace_without_steps_are_refused():
    with pytest.raises(TraceError, match="x.json: not a PyTorch profiler trace"):
        parse_rank({"hello": 1}, "x.json")
    doc = load("gloo_dp2_pp2/rank0_trace.json.gz")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if "ProfilerStep" not in e.get("name", "")]
    with pytest.raises(TraceError, match="r0.json: has no ProfilerStep#N ranges"):
        parse_rank(doc, "r0.json")


def test_without_backward_ranges_the_autograd_ops_make_the_backward():
    doc = load("hta/nccl_data.json.gz")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("name") != "## backward ##"]
    t = parse_rank(doc, "nccl_data")
    for step in t.steps:
        (b,) = [s for s in step.spans if s.kind == "B"]
        assert b.op == "autograd" and b.end_us - b.start_us > 50_000  # ~100 ms of backward
