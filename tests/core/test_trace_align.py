"""Clock alignment across ranks (app/core/traces/align.py): offsets from collective ends,
the residual, and refusal of an alignment whose residual is over a step."""

import pytest
from test_trace_parse import load

from app.core.layout.topology import Layout
from app.core.traces import (
    RankTrace,
    RunShape,
    Span,
    StepSpans,
    TraceError,
    align,
    build_run,
    infer_layout,
    label_run,
    parse_rank,
)

FIVE_S_NS = 5_000_000_000


def gloo_docs() -> list[dict]:
    return [load(f"gloo_dp2_pp2/rank{r}_trace.json.gz") for r in range(4)]


def imported(docs: list[dict]):
    traces = [parse_rank(d, f"r{i}") for i, d in enumerate(docs)]
    layout = infer_layout(traces)
    labelled = label_run(traces, layout)
    alignment = align(labelled, layout)
    info, records = build_run(labelled, layout, alignment, RunShape("aligned"))
    return alignment, {(r.rank, r.step): r for r in records}


def test_a_rank_whose_clock_is_five_seconds_ahead_is_found_and_put_back():
    before, records_before = imported(gloo_docs())
    docs = gloo_docs()
    docs[2]["baseTimeNanoseconds"] += FIVE_S_NS  # rank 2's clock runs 5 s ahead
    after, records_after = imported(docs)
    shift = after.offsets_us[2] - before.offsets_us[2]
    assert shift == pytest.approx(5_000_000.0, abs=1e-3)  # microseconds
    assert after.residual_us == pytest.approx(before.residual_us, abs=1e-3)
    for key, rec in records_before.items():  # the stored steps start where they did
        assert records_after[key].t0 == pytest.approx(rec.t0, abs=1e-6)
    # The four ranks ran on one host and one clock: what is left is scheduling noise on
    # a shared CPU, well under a step.
    assert max(abs(o) for o in before.offsets_us.values()) < before.step_us / 4


def collective_ranks(offsets_us: dict[int, float], ends_us: list[float]) -> list[RankTrace]:
    """Two ranks of a DP group whose all-reduces end together on the true clock, each rank's
    clock running offsets_us ahead."""
    out = []
    for r, off in offsets_us.items():
        spans = tuple(Span("coll", e - 5 + off, e + off, op="allreduce", group=(0, 1))
                      for e in ends_us)  # fmt: skip
        step = StepSpans(0, off, 1000.0 + off, spans)
        out.append(RankTrace(f"r{r}.json", r, 2, "cuda", "fp32", (step,)))
    return out


def test_offsets_come_from_collective_ends_relative_to_the_lowest_rank():
    layout = Layout(dp=2, tp=1, pp=1)
    traces = label_run(collective_ranks({0: 100.0, 1: -250.0}, [100, 400, 900]), layout)
    a = align(traces, layout)
    assert a.offsets_us == {0: 0.0, 1: -350.0}
    assert (a.residual_us, a.matched, a.step_us) == (0.0, 3, 1000.0)


def test_an_alignment_whose_residual_is_over_a_step_is_refused():
    layout = Layout(dp=2, tp=1, pp=1)
    (r0,) = collective_ranks({0: 0.0}, [100, 400, 900])
    # Rank 1's file holds another step's last collective: the median pair offset is 0, and
    # that collective is left 3 ms (3 steps) apart.
    (r1,) = collective_ranks({1: 0.0}, [100, 400, 3900])
    with pytest.raises(TraceError, match=r"clock alignment refused: .* 3\.000 ms, more than a"):
        align(label_run([r0, r1], layout), layout)
