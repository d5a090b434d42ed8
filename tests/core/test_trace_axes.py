"""Each collective's axis (app/core/traces/axes.py): a layout inferred from the groups the
traces show, or given; refusal of a group that fits no rank order."""

from dataclasses import replace

import pytest
from test_trace_parse import load

from app.core.layout.topology import Layout
from app.core.traces import (
    RankTrace,
    Span,
    StepSpans,
    TraceError,
    infer_layout,
    label_run,
    parse_rank,
)


def rank_trace(rank: int, world: int, spans: list[Span], name: str = "") -> RankTrace:
    step = StepSpans(0, 0.0, 1000.0, tuple(spans))
    return RankTrace(name or f"rank{rank}.json", rank, world, "cuda", "bf16", (step,))


def megatron_traces() -> list[RankTrace]:
    """8 ranks, tp=2 dp=2 pp=2 in Megatron's order tp-dp-pp: each rank's TP and DP
    all-reduces name their groups, and stages 0 and 1 (4 apart) send to each other."""
    layout = Layout(dp=2, tp=2, pp=2, order=("tp", "dp", "pp"))
    out = []
    for r in range(8):
        tp, dp = tuple(layout.group("tp", r)), tuple(layout.group("dp", r))
        peer = r + 4 if r < 4 else r - 4
        spans = [Span("coll", 10, 20, op="allreduce", group=tp),
                 Span("send" if r < 4 else "recv", 30, 40, op="send", peer=peer),
                 Span("coll", 50, 60, op="allreduce", group=dp)]  # fmt: skip
        out.append(rank_trace(r, 8, spans))
    return out


def test_megatron_groups_infer_tp_fastest_then_dp_then_pp():
    layout = infer_layout(megatron_traces())
    assert (layout.dp, layout.tp, layout.pp, layout.order) == (2, 2, 2, ("tp", "dp", "pp"))


def test_each_collective_gets_the_axis_of_its_group():
    traces = label_run(megatron_traces(), Layout(dp=2, tp=2, pp=2, order=("tp", "dp", "pp")))
    for t in traces:
        assert [s.axis for s in t.steps[0].spans] == ["tp", "pp", "dp"]


def test_the_same_groups_under_another_order_get_other_axes():
    # Under tp-pp-dp, ranks 0 and 2 are a PP pair and 0 and 4 a DP pair: the sends are then
    # not between stages, and the import says so, naming the file and the ranks.
    with pytest.raises(TraceError, match=r"rank0.json: send between ranks 0 and 4 is not"):
        label_run(megatron_traces(), Layout(dp=2, tp=2, pp=2, order=("tp", "pp", "dp")))


def test_a_group_of_no_axis_is_refused_naming_it():
    spans = [Span("coll", 10, 20, op="allreduce", group=(0, 3))]
    traces = [rank_trace(0, 8, spans, "r0.json.gz")]
    with pytest.raises(TraceError, match=r"r0.json.gz: process group \[0, 3\] is no group of tp"):
        label_run(traces, Layout(dp=2, tp=2, pp=2, order=("tp", "dp", "pp")))


def test_inference_refuses_an_unevenly_spaced_group_and_a_fourth_family():
    odd = [rank_trace(0, 8, [Span("coll", 1, 2, op="allreduce", group=(0, 1, 3))])]
    with pytest.raises(TraceError, match=r"process group \[0, 1, 3\] is not evenly spaced"):
        infer_layout(odd)
    # Three families are TP, CP and DP by spacing (Megatron's tp-cp-ep-dp-pp); a fourth is none.
    three = [Span("coll", 1, 2, op="allreduce", group=g) for g in ((0, 1), (0, 2), (0, 4))]
    layout = infer_layout([rank_trace(0, 8, three)])
    assert (layout.tp, layout.cp, layout.dp, layout.order) == (2, 2, 2, ("pp", "tp", "cp", "dp"))
    four = three + [Span("coll", 1, 2, op="allreduce", group=(0, 8))]
    with pytest.raises(TraceError, match=r"process group \[0, 8\] is a fourth family"):
        infer_layout([rank_trace(0, 16, four)])


def test_a_world_wide_collective_is_world_unless_one_axis_spans_it():
    spans = [Span("coll", 1, 2, op="barrier", group=tuple(range(8)))]
    (t,) = label_run([rank_trace(0, 8, spans)], Layout(dp=2, tp=2, pp=2))
    assert t.steps[0].spans[0].axis == "world"
    (t,) = label_run([rank_trace(0, 8, spans)], Layout(dp=8, tp=1, pp=1))
    assert t.steps[0].spans[0].axis == "dp"


def test_a_layout_of_another_world_size_is_refused_naming_the_file():
    with pytest.raises(TraceError, match=r"rank3.json: rank 3 of a world of 4 does not fit"):
        label_run([rank_trace(3, 4, [])], Layout(dp=2, tp=1, pp=1))


def test_gloo_fixture_infers_dp2_pp2_and_labels_by_elimination():
    traces = [parse_rank(load(f"gloo_dp2_pp2/rank{r}_trace.json.gz"), f"r{r}") for r in range(4)]
    layout = infer_layout(traces)
    assert (layout.dp, layout.tp, layout.pp, layout.order) == (2, 1, 2, ("tp", "pp", "dp"))
    for t in label_run(traces, layout):
        axes = {(s.kind, s.axis) for st in t.steps for s in st.spans if s.axis}
        assert axes == {("coll", "dp"), ("send", "pp"), ("recv", "pp")}
    # With tp and dp both over 1, a collective without group ranks has no single axis.
    bare = [rank_trace(0, 8, [Span("coll", 1, 2, op="all_reduce")], "g0.json")]
    with pytest.raises(TraceError, match="g0.json: collective all_reduce has no Process Group"):
        label_run(bare, Layout(dp=2, tp=2, pp=2))


def test_cp_and_ep_groups_get_their_axes_under_megatrons_folding():
    """tp 2 x cp 2 x dp 2, ep 4 (order tp-cp-ep-dp-pp): an EP group is then dp x cp's ranks,
    so the all-to-all on it is EP's and the all-reduce on it DP's (the gradient group with
    context parallelism); a ring-attention send between CP ranks is CP's."""
    layout = Layout(dp=2, tp=2, pp=1, order=("tp", "cp", "ep", "dp", "pp"), cp=2, ep=4)
    spans = [Span("coll", 1, 2, op="allreduce", group=(0, 1)),
             Span("coll", 3, 4, op="_allgather_base", group=(0, 2)),
             Span("send", 5, 6, op="send", peer=2),
             Span("coll", 7, 8, op="all_to_all", group=(0, 2, 4, 6)),
             Span("coll", 9, 10, op="allreduce", group=(0, 2, 4, 6)),
             Span("coll", 11, 12, op="allreduce", group=(0, 4))]  # fmt: skip
    (t,) = label_run([rank_trace(0, 8, spans)], layout)
    assert [s.axis for s in t.steps[0].spans] == ["tp", "cp", "cp", "ep", "dp", "dp"]
    with pytest.raises(
        TraceError,
        match=r"send between ranks 0 and 4 is not between pipeline "
        r"stages or CP ranks under dp=2 tp=2 pp=1 cp=2 ep=4",
    ):
        label_run([rank_trace(0, 8, [Span("send", 5, 6, op="send", peer=4)])], layout)


def tp_only_traces(named: bool) -> list[RankTrace]:
    """dp=1 tp=2 pp=2 as the probe runs it (order tp-dp-pp): TP all-reduces on (0, 1) and
    (2, 3), stages 0 and 1 two ranks apart. One family of groups, spaced 1, as a dp=2 tp=1
    run's DP groups are; ``named``: the probe's "tp all_reduce ranks=[0, 1]" ranges."""
    out = []
    for r in range(4):
        tp = (0, 1) if r < 2 else (2, 3)
        peer = r + 2 if r < 2 else r - 2
        spans = [Span("coll", 10, 20, op="all_reduce", group=tp),
                 Span("send" if r < 2 else "recv", 30, 40, op="send", peer=peer)]  # fmt: skip
        t = rank_trace(r, 4, spans)
        out.append(replace(t, named=frozenset({(tp, "tp")})) if named else t)
    return out


def test_a_lone_family_named_tp_is_tp_not_dp():
    # The probe's dp=1 tp=2 pp=2 traces were imported as dp=2 tp=1: every TP all-reduce
    # stored as a DP one. Its ranges name the axis; by spacing alone one family is DP.
    layout = infer_layout(tp_only_traces(named=True))
    assert (layout.dp, layout.tp, layout.pp) == (1, 2, 2)
    for t in label_run(tp_only_traces(named=True), layout):
        assert [s.axis for s in t.steps[0].spans] == ["tp", "pp"]
    unnamed = infer_layout(tp_only_traces(named=False))
    assert (unnamed.dp, unnamed.tp, unnamed.pp) == (2, 1, 2)


def test_named_axes_that_clash_fall_back_to_spacing():
    # Two families both named tp (a mislabelled loop): spacing decides, as before.
    traces = megatron_traces()
    clash = frozenset({((0, 1), "tp"), ((0, 2), "tp")})
    layout = infer_layout([replace(t, named=clash) for t in traces])
    assert (layout.dp, layout.tp, layout.pp, layout.order) == (2, 2, 2, ("tp", "dp", "pp"))


def test_kineto_reads_axis_names_from_probe_ranges_and_device_mesh_groups():
    doc = {
        "distributedInfo": {"rank": 0, "world_size": 4, "pg_config": [
            {"pg_desc": "default_pg", "ranks": [0, 1, 2, 3]},
            {"pg_desc": "mesh_pp", "ranks": [0, 2]},
            {"pg_desc": "mesh_dp", "ranks": [0]}]},
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100,
             "pid": 1, "tid": 1},
            {"ph": "X", "cat": "user_annotation", "name": "tp all_reduce ranks=[0, 1]",
             "ts": 10, "dur": 5, "pid": 1, "tid": 1},
            {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "ts": 11, "dur": 3,
             "pid": 1, "tid": 1}],
    }  # fmt: skip
    t = parse_rank(doc, "rank0")
    assert t.named == frozenset({((0, 1), "tp"), ((0, 2), "pp")})
    assert [s.group for s in t.steps[0].spans if s.kind == "coll"] == [(0, 1)]


def test_a_layout_that_misplaces_the_sends_is_refused_in_the_pages_language():
    # /runs with dp=4 typed for a dp=2 pp=2 upload answered in English on the zh page: the
    # refusal had no key. Its English is unchanged (the CLI's); zh words it in Chinese.
    from app import i18n
    from app.i18n.errors import message

    with pytest.raises(TraceError) as caught:
        label_run(megatron_traces(), Layout(dp=2, tp=2, pp=2, order=("tp", "pp", "dp")))
    err = caught.value
    assert str(err).startswith("rank0.json: send between ranks 0 and 4 is not between pipeline")
    assert err.key == "send_not_stages" and (err.params["rank"], err.params["peer"]) == (0, 4)
    detail = {"type": f"trace.{err.key}", "ctx": err.params, "msg": str(err)}
    zh = message(detail, "zh", i18n.strings("zh"))
    assert zh.startswith("rank0.json: ") and "流水线" in zh and "dp=2 tp=2 pp=2" in zh
    bare = [rank_trace(0, 8, [Span("coll", 1, 2, op="all_reduce")], "g0.json")]
    with pytest.raises(TraceError) as caught:
        label_run(bare, Layout(dp=2, tp=2, pp=2))
    assert caught.value.key == "no_group_ranks" and caught.value.params["axes"] == 2


def test_the_gradient_reduction_over_cp_is_dp_when_dp_is_one():
    """dp 1 x cp 2 x tp 2: the dp x cp gradient group is the CP group itself, so its all-reduce
    (or reduce-scatter) is DP's gradients, while an all-gather there is CP's exchange (it was
    all labelled CP: an import showed 'cp 48' and no DP)."""
    layout = Layout(dp=1, tp=2, pp=1, order=("tp", "cp", "dp", "pp"), cp=2)
    spans = [Span("coll", 1, 2, op="_allgather_base", group=(0, 2)),
             Span("coll", 3, 4, op="allreduce", group=(0, 2)),
             Span("coll", 5, 6, op="_reduce_scatter_base", group=(0, 2)),
             Span("coll", 7, 8, op="allreduce", group=(0, 1))]  # fmt: skip
    (t,) = label_run([rank_trace(0, 4, spans)], layout)
    assert [s.axis for s in t.steps[0].spans] == ["cp", "dp", "dp", "tp"]
