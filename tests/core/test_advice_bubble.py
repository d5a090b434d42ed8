"""The bubble advice names the real cause: with m >= 4p more micro-batches are not the fix,
an uneven stage (or the schedule's own warm-up) is, and no advice proposes what is already set.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario
from app.core.teach.advice import Breakdown, advise

SCHEDULES = ("1f1b", "gpipe", "interleaved", "zb-h1", "zbv", "interleaved-zb", "dualpipev")


def bubble_advice(view: dict) -> str:
    (a,) = [a for a in view["advice"] if a["rule"] == "bubble"]
    return a["message"]


def test_enough_microbatches_get_the_uneven_stage_not_more_microbatches():
    """/?pp=4&microbatches=16&schedule=1f1b advised "from 16 to at least 16" before."""
    view = evaluate(Scenario(pp=4, microbatches=16, schedule="1f1b"))
    text = bubble_advice(view)
    assert "at least 16" not in text and "raise micro-batches" not in text
    assert "stage 3" in text and "output head" in text
    assert "--decoder-last-pipeline-num-layers" in text


def test_the_suggested_split_is_faster_and_less_bubbly():
    s = Scenario(pp=4, microbatches=16, schedule="1f1b")
    before = evaluate(s)
    split = re.search(r"stage_layers=([\d,]+)", bubble_advice(before)).group(1)
    after = evaluate(s.model_copy(update={"stage_layers": split}))
    assert sum(map(int, split.split(","))) == before["model"]["layers"]
    assert after["step_time_s"] < before["step_time_s"]
    assert after["timeline"]["bubble_fraction"] < before["timeline"]["bubble_fraction"]


def test_too_few_microbatches_still_get_the_article_rule():
    view = evaluate(Scenario(pp=4, microbatches=4, schedule="1f1b"))
    assert "from 4 to at least 16" in bubble_advice(view)


def _proposes_current(b: Breakdown, text: str) -> bool:
    raise_m = re.search(r"from (\d+) to at least (\d+)", text)
    if raise_m and int(raise_m.group(2)) <= int(raise_m.group(1)):
        return True
    if b.schedule == "interleaved" and "use the interleaved schedule" in text:
        return True
    return b.tp == 1 and "reduce TP" in text


@settings(max_examples=300, deadline=None)
@given(
    pp=st.integers(1, 16),
    m=st.integers(1, 128),
    tp=st.integers(1, 8),
    schedule=st.sampled_from(SCHEDULES),
    bubble=st.floats(0.0, 0.9),
    tp_s=st.floats(0.0, 0.9),
    work=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=8),
)
def test_no_advice_proposes_the_current_value(pp, m, tp, schedule, bubble, tp_s, work):
    b = Breakdown(step_s=1.0, tp_s=tp_s, dp_s=0.0, bubble_fraction=bubble, memory_ratio=0.5,
                  microbatches=m, pp=pp, tp=tp, schedule=schedule, stage_work=tuple(work),
                  stage_layers=tuple(4 for _ in work))  # fmt: skip
    for a in advise(b):
        assert not _proposes_current(b, a.message), a.message


def test_no_advice_on_real_scenarios_proposes_the_current_value():
    for schedule in ("1f1b", "interleaved", "zb-h1"):
        for m in (4, 8, 16, 32):
            v = 2 if schedule == "interleaved" else 1
            s = Scenario(pp=4, microbatches=m, schedule=schedule, virtual_stages=v)
            b = Breakdown(step_s=1, tp_s=0, dp_s=0, bubble_fraction=0.3, memory_ratio=0.5,
                          microbatches=m, pp=4, tp=1, schedule=schedule)  # fmt: skip
            for a in evaluate(s)["advice"]:
                assert not _proposes_current(b, a["message"]), (s.query(), a["message"])
