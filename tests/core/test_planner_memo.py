"""The planner's closed-form pass shares one cache across a plan's candidates: every
candidate's estimate must equal the one computed alone, whatever was cached before it."""

import pytest

from app.core.evaluate.planner import candidates, estimate
from app.core.inputs.presets import HARDWARE, MODELS


@pytest.mark.parametrize(
    ("model", "hardware", "gpus", "batch"),
    [("gpt3-13b", "a100-80g", 64, 256), ("llama3-8b", "h100-sxm", 32, 128)],
)
def test_shared_memo_matches_fresh_estimates(model, hardware, gpus, batch):
    m, hw = MODELS[model], HARDWARE[hardware]
    pool = candidates(m, hw, gpus, batch)
    memo: dict = {}
    shared = [estimate(c, m, hw, batch, memo) for c in pool]
    # ZeRO stages, schedules and dp all vary inside the pool, so a cache key missing any
    # of them would hand some candidate another's numbers.
    assert {(c.zero, c.schedule) for c in pool} >= {(z, "1f1b") for z in range(4)}
    assert len({c.dp for c in pool}) > 2
    assert shared == [estimate(c, m, hw, batch) for c in pool]
    assert len(memo) < len(pool)
