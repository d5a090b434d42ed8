"""The planner's whole answer (rows, their order and every number) for four requests equals
what it answered before planner_pass.py priced the candidates faster: the speed-up must not
change one answer. planner_golden.json was written by plan() as at commit 1837c93 (this
project's own output; request = model, hardware, gpus, global batch, top, headroom).
Regenerate it only with a change that means to move the planner's answers."""

import json
from pathlib import Path

import pytest

from app.core.evaluate.planner import plan

GOLDEN = json.loads((Path(__file__).parent / "planner_golden.json").read_text())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", GOLDEN, ids=lambda case: "-".join(map(str, case["request"])))
def test_plan_equals_the_answer_before_the_fast_pass(case):
    model, hardware, gpus, batch, top, headroom = case["request"]
    got = plan(model, hardware, gpus, batch, top, headroom=headroom)
    # Through JSON as the API sends it; floats round-trip exactly, so == is bit for bit.
    assert json.loads(json.dumps(got)) == case["result"]
    assert case["result"]["results"], "a request with no fitting row checks too little"
