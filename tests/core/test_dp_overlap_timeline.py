"""The timeline draws where overlapped DP communication lands and what stays exposed."""

import pytest

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.views.chrome_trace import build

BASE = dict(dp=8, tp=1, pp=2, microbatches=8, model="llama3-8b", hardware="h100-sxm")


def tail_of(view, kind):
    return [e for e in view["timeline"]["tail"] if e["kind"] == kind]


def test_the_hidden_share_ends_where_the_pipeline_drains_and_the_rest_follows():
    view = evaluate(Scenario(**BASE, overlap_grad_reduce=True))
    tl, bd = view["timeline"], view["breakdown"]
    hidden, exposed = tail_of(view, "dp_hidden"), tail_of(view, "dp")
    assert bd["dp_hidden_s"] > 0 and len(hidden) == 2
    for e in hidden:
        assert e["end"] == pytest.approx(tl["makespan"])
        assert e["end"] - e["start"] == pytest.approx(bd["dp_hidden_s"])
    for e in exposed:
        assert e["start"] == pytest.approx(tl["makespan"])
        assert e["end"] - e["start"] == pytest.approx(bd["dp_s"])
    # Hidden plus exposed is the whole sync; only the exposed part lengthens the step.
    assert bd["dp_hidden_s"] + bd["dp_s"] == pytest.approx(bd["dp_total_s"])


def test_without_overlap_nothing_is_drawn_hidden():
    view = evaluate(Scenario(**BASE, overlap_grad_reduce=False))
    assert tail_of(view, "dp_hidden") == []
    assert tail_of(view, "dp")[0]["end"] - tail_of(view, "dp")[0]["start"] == pytest.approx(
        view["breakdown"]["dp_total_s"]
    )


def test_the_trace_puts_the_hidden_share_on_the_dp_thread():
    view = evaluate(Scenario(**BASE, overlap_grad_reduce=True))
    names = {e["name"]: e["tid"] for e in build(view)["traceEvents"] if e.get("ph") == "X"}
    assert names["DP all-reduce, hidden under the backward"] == names["DP all-reduce"]
