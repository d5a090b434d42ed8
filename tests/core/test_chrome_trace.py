"""Chrome trace export: what Perfetto needs to draw one process per rank and send->recv arrows."""

import itertools
import json
from collections import defaultdict

import pytest

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.views import chrome_trace
from app.core.views.flow import sends

SCHEDULES = [
    dict(schedule="naive"),
    dict(schedule="gpipe"),
    dict(schedule="1f1b"),
    dict(schedule="zb-h1", w_time=0.5),
    dict(schedule="interleaved", virtual_stages=2, microbatches=8),
]


def trace_of(**kw):
    base = dict(pp=4, microbatches=4, f_time=1, b_time=2, p2p_time=0.25)
    view = evaluate(Scenario(**{**base, **kw}))
    return view, chrome_trace.build(view)


def slices(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


@pytest.mark.parametrize("kw", SCHEDULES)
def test_one_process_per_pipeline_rank_with_named_compute_and_comm_threads(kw):
    view, trace = trace_of(**kw)
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert procs == {s: f"pipeline rank {s}" for s in range(4)}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert {name for (_, _), name in threads.items()} >= {"compute (F/B/W, optimizer)"}
    assert any(name.startswith("comm") for name in threads.values())
    json.dumps(trace, allow_nan=False)


@pytest.mark.parametrize("kw", SCHEDULES)
def test_every_compute_event_is_a_slice_on_its_ranks_compute_thread_in_microseconds(kw):
    view, trace = trace_of(**kw)
    compute = sorted((e["pid"], e["ts"], e["dur"]) for e in slices(trace) if e["cat"] == "compute")
    expected = sorted(
        (e["stage"], e["start"] * 1000, (e["end"] - e["start"]) * 1000)
        for e in view["timeline"]["events"] + view["timeline"]["tail"]
        if e["kind"] != "dp"  # the DP all-reduce is communication, on its own thread
    )
    # Flattened: pytest.approx compares flat sequences of numbers, not nested tuples.
    assert len(compute) == len(expected)
    assert [c[0] for c in compute] == [e[0] for e in expected]
    assert [x for c in compute for x in c[1:]] == pytest.approx(
        [x for e in expected for x in e[1:]]
    )


@pytest.mark.parametrize("kw", SCHEDULES)
def test_each_send_has_one_flow_from_its_sender_to_its_receiver(kw):
    view, trace = trace_of(**kw)
    links = sends(kw["schedule"], view["timeline"]["events"], 4, view["schedule"]["virtual_stages"])
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    assert set(starts) == set(ends) == set(range(len(links)))
    for i, link in enumerate(links):
        assert (starts[i]["pid"], ends[i]["pid"]) == (link["src_stage"], link["dst_stage"])
        assert ends[i]["bp"] == "e"


@pytest.mark.parametrize("kw", SCHEDULES)
def test_every_flow_point_lies_inside_a_slice_on_its_thread_so_perfetto_binds_it(kw):
    _, trace = trace_of(**kw)
    by_thread = defaultdict(list)
    for e in slices(trace):
        by_thread[e["pid"], e["tid"]].append(e)
    for f in (e for e in trace["traceEvents"] if e["ph"] in "sf"):
        assert any(
            s["ts"] <= f["ts"] <= s["ts"] + s["dur"] for s in by_thread[f["pid"], f["tid"]]
        ), f


@pytest.mark.parametrize("kw", SCHEDULES)
def test_no_two_slices_overlap_on_one_thread(kw):
    _, trace = trace_of(**kw)
    by_thread = defaultdict(list)
    for e in slices(trace):
        by_thread[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end - 1e-6


@pytest.mark.parametrize("tp_time", [[{"F": 0.1, "B": 0.2}] * 4, {"F": [0.1] * 4, "B": [0.2] * 4}])
def test_tp_all_reduces_inside_f_and_b_become_comm_slices_in_either_shape(tp_time):
    view = evaluate(Scenario(pp=4, microbatches=4, f_time=1))
    view["timeline"]["tp_time"] = tp_time
    tp = [e for e in slices(chrome_trace.build(view)) if e["tid"] == chrome_trace.THREADS["tp"][0]]
    assert len(tp) == len(view["timeline"]["events"])
    assert sorted({e["dur"] for e in tp}) == pytest.approx([100.0, 200.0])


def test_the_steps_tail_lands_on_the_dp_and_compute_threads():
    view = evaluate(Scenario(pp=2, microbatches=2, f_time=1))
    end = view["timeline"]["makespan"]
    view["timeline"]["tail"] = [
        {"stage": s, "kind": k, "microbatch": 0, "chunk": 0, "start": end + i, "end": end + i + 1}
        for s in range(2)
        for i, k in enumerate(("dp", "optim"))
    ]
    tail = [e for e in slices(chrome_trace.build(view)) if e["ts"] >= end * 1000]
    assert {(e["name"], e["tid"]) for e in tail} == {
        ("DP all-reduce", chrome_trace.THREADS["dp"][0]),
        ("optimizer step", chrome_trace.THREADS["compute"][0]),
    }


def test_seconds_scale_to_microseconds_when_the_timeline_is_not_abstract():
    view = evaluate(Scenario(pp=2, microbatches=2))
    assert view["timeline"]["units"] == "s"
    first = view["timeline"]["events"][0]
    x = next(e for e in slices(chrome_trace.build(view)) if e["cat"] == "compute")
    assert x["dur"] == pytest.approx((first["end"] - first["start"]) * 1e6)
