"""Each flow frame's caption says what the timeline does there, and DualPipeV's arrows leave
when their overlapped pair ends."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import i18n
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.schedules import Action, ScheduleName, release_units
from app.core.views import flow, flow_captions

CASES = [
    {"schedule": "naive", "dp": 2, "tp": 2, "pp": 2, "microbatches": 4},
    {"schedule": "gpipe", "pp": 4, "microbatches": 4},
    {"schedule": "1f1b", "pp": 4, "microbatches": 8, "p2p_time": 0.25},
    {"schedule": "zb-h1", "pp": 4, "microbatches": 8, "w_time": 0.5},
    {"schedule": "interleaved", "pp": 2, "microbatches": 4, "virtual_stages": 2},
    {"schedule": "zbv", "pp": 4, "microbatches": 8, "w_time": 0.5},
    {"schedule": "dualpipev", "pp": 4, "microbatches": 8, "p2p_time": 0.25},
]


def view_and_flow(query):
    view = evaluate(Scenario(**{"f_time": 1, **query}))
    return view, flow.flow_view(view)


def clauses_at(extra, k):
    cap = extra["captions"]
    return [cap["clauses"][i] for i in cap["frames"][k]]


def test_the_articles_demo_reads_frame_by_frame():
    # The article's DP=2 x TP=2 x PP=2, 4 micro-batches, naive: stage 0 is GPUs 0,1,4,5.
    view, extra = view_and_flow(CASES[0])
    assert clauses_at(extra, 0) == [["run", "F0", 0, "0,1,4,5"], ["idle_one", "1"]]
    assert clauses_at(extra, 1) == [
        ["run", "F1", 0, "0,1,4,5"],
        ["run", "F0", 1, "2,3,6,7"],
        ["send_f", "F0", 0, 1],
    ]
    assert clauses_at(extra, len(extra["frames"]["times"]) - 1) == [["done"]]


@pytest.mark.parametrize("query", CASES, ids=lambda q: q["schedule"])
def test_every_caption_names_what_each_stage_runs_and_who_waits(query):
    view, extra = view_and_flow(query)
    events, pp = view["timeline"]["events"], view["layout"]["sizes"]["pp"]
    chunks = view["schedule"]["virtual_stages"]
    for k, t in enumerate(extra["frames"]["times"]):
        said = clauses_at(extra, k)
        running = {e["stage"]: e for e in events if e["start"] <= t < e["end"]}
        runs = {c[2]: c[1] for c in said if c[0] == "run"}
        if len(running) <= flow_captions.MAX_RUN_CLAUSES:
            assert runs == {
                s: flow_captions.action_label(e["kind"], e["microbatch"], e["chunk"], chunks)
                for s, e in running.items()
            }
        live = [s for s in extra["sends"] if flow_captions._under_way(s, t)]
        if said == [["done"]]:
            assert not running and not live and t >= view["timeline"]["makespan"]
            continue
        tail = {e["stage"] for e in view["timeline"]["tail"] if e["start"] <= t < e["end"]}
        idle = next((c[1] for c in said if c[0].startswith("idle")), "")
        busy = running.keys() | tail
        assert idle == flow_captions.span_list([s for s in range(pp) if s not in busy])
        sent = [(c[2], c[3]) for c in said if c[0] in ("send_f", "send_b")]
        shown = live[: flow_captions.MAX_SEND_CLAUSES]
        assert sent == [(s["src_stage"], s["dst_stage"]) for s in shown]


def test_the_tail_is_captioned_after_the_pipeline_drains():
    view, extra = view_and_flow({"pp": 2, "microbatches": 2, "dp": 2})
    tail = view["timeline"]["tail"]
    assert tail, "dp=2 has a gradient all-reduce in the step's tail"
    start = min(e["start"] for e in tail if e["kind"] == "dp")
    k = extra["frames"]["times"].index(start)
    assert ["tail_dp", "0–1"] in clauses_at(extra, k)
    optim = min(e["start"] for e in tail if e["kind"] == "optim")
    assert ["tail_optim", "0–1"] in clauses_at(extra, extra["frames"]["times"].index(optim))


def test_every_clause_the_core_says_has_a_template_with_its_arguments_in_both_languages():
    seen = set()
    more = [
        {"pp": 2, "microbatches": 2, "dp": 2},
        {"pp": 1, "dp": 16},
        {"pp": 8, "microbatches": 8},
    ]
    for query in [*CASES, *more]:
        _, extra = view_and_flow(query)
        for clause in extra["captions"]["clauses"]:
            key, args = clause[0], clause[1:]
            seen.add(key)
            for text in (i18n.strings(lang)[f"flowcap.{key}"] for lang in ("en", "zh")):
                used = {int(n) for n in re.findall(r"\{(\d+)\}", text)}
                assert used == set(range(len(args))), (key, text)
    assert {"run", "run_n", "send_f", "send_b", "idle_one", "idle_many", "done"} <= seen
    assert {"tail_dp", "tail_optim", "more", "more_sends"} <= seen


def test_past_the_budget_no_captions_are_made(monkeypatch):
    view, extra = view_and_flow(CASES[2])
    times = extra["frames"]["times"]
    monkeypatch.setattr(flow_captions, "CAPTION_BUDGET", len(times) * 4 - 1)
    assert flow_captions.captions(view, extra["sends"], times) is None


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 40), unique=True, min_size=1))
def test_span_list_names_every_number_once(numbers):
    numbers.sort()
    named = []
    for part in flow_captions.span_list(numbers).split(","):
        lo, _, hi = part.partition("–")
        named += range(int(lo), int(hi or lo) + 1)
    assert named == numbers


def test_dualpipev_arrows_leave_when_the_overlapped_pair_ends():
    view, extra = view_and_flow(CASES[6])
    events, pp = view["timeline"]["events"], view["layout"]["sizes"]["pp"]
    end_of = {}
    for rank in range(pp):
        mine = [e for e in events if e["stage"] == rank]
        row = [Action(e["kind"], e["microbatch"], e["chunk"]) for e in mine]
        last = release_units(ScheduleName.dualpipev, row, rank == pp - 1)
        for e, j in zip(mine, last, strict=True):
            end_of[(rank, e["kind"], e["microbatch"], e["chunk"])] = (e["end"], mine[j]["end"])
    late = 0
    for s in extra["sends"]:
        own_end, unit_end = end_of[(s["src_stage"], s["kind"], s["microbatch"], s["src_chunk"])]
        assert s["send"] == unit_end
        assert s["recv"] >= s["send"] + 0.25 - 1e-9  # the consumer waits for the pair, plus p2p
        late += unit_end > own_end
    assert late > 0, "some forwards are overlapped with a backward and leave with it"


def test_other_schedules_send_at_the_producers_end():
    view, extra = view_and_flow(CASES[2])
    ends = {(e["stage"], e["kind"], e["microbatch"]): e["end"] for e in view["timeline"]["events"]}
    for s in extra["sends"]:
        assert s["send"] == ends[(s["src_stage"], s["kind"], s["microbatch"])]
