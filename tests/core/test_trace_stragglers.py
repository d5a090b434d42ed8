"""Stragglers (app/core/traces/stragglers.py): the slow rank and its phase against its own
stage's median, and a slow link told apart from a slow rank."""

from pathlib import Path

from app.core.inputs.protocol import ProbeRecord
from app.core.layout.topology import Layout
from app.core.traces import RunShape, align, build_run, infer_layout, label_run
from app.core.traces import find_stragglers as find
from app.importers.trace_files import read_traces, trace_paths

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
LAYOUT = Layout(dp=2, tp=2, pp=2)  # tp-pp-dp: DP groups {0,4} {1,5} {2,6} {3,7}


def imported(directory: str) -> tuple[list[ProbeRecord], Layout]:
    traces = read_traces(trace_paths([TRACES / directory]))
    layout = infer_layout(traces)
    labelled = label_run(traces, layout)
    _, records = build_run(labelled, layout, align(labelled, layout), RunShape("s"))
    return list(records), layout


def test_the_rank_that_slept_in_its_forwards_is_named_with_its_phase():
    # make_gloo_trace.py gloo_dp2_pp2_slow_rank2 2: rank 2 sleeps 30 ms in each forward.
    records, layout = imported("gloo_dp2_pp2_slow_rank2")
    (slow,) = find(records, layout)
    assert (slow.cause, slow.phase, slow.ranks) == ("rank", "compute", (2,))
    assert 0.02 < slow.excess_s < 0.04  # the two 30 ms sleeps, against its stage's median
    # Its pipeline peer (rank 3) waits for it inside its own forwards: waiting, not slow.
    assert find(imported("gloo_dp2_pp2")[0], layout) == []  # the same run, nobody asleep


def records(slow_rank: int | None = None, slow_dp_group: tuple[int, ...] = ()) -> list:
    """Two steps of 8 ranks: 10 ms F, 20 ms B, then a 5 ms DP all-reduce."""
    out = []
    for step in range(2):
        for r in range(8):
            c = LAYOUT.coord(r)
            f = 0.01 * (2 if r == slow_rank else 1)
            dp = 0.005 + (0.05 if r in slow_dp_group else 0.0)
            events = [{"kind": "F", "microbatch": 0, "start": 0.0, "end": f},
                      {"kind": "B", "microbatch": 0, "start": f, "end": f + 0.02},
                      {"kind": "dp", "start": f + 0.02, "end": f + 0.02 + dp}]  # fmt: skip
            out.append(ProbeRecord(run="s", rank=r, coord={"dp": c.dp, "pp": c.pp, "tp": c.tp},
                                   node=0, step=step, t0=1.0, events=events))  # fmt: skip
    return out


def test_a_slow_rank_is_a_rank_and_a_slow_group_is_a_link():
    (slow,) = find(records(slow_rank=5), LAYOUT)
    assert (slow.cause, slow.phase, slow.ranks) == ("rank", "compute", (5,))
    (link,) = find(records(slow_dp_group=(1, 5)), LAYOUT)
    assert (link.cause, link.phase, link.ranks) == ("link", "dp", (1, 5))
    assert link.excess_s > 0.045 and find(records(), LAYOUT) == []
