"""planner_pass.Pass, the planner's fast closed-form pass, gives every candidate the very
numbers planner_search.estimate (the one-candidate reference) gives it: the peak of only the
stages that can be the peak equals the peak of all of them, and the shared caches hand no
candidate another's numbers."""

import pytest

from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import candidates, estimate
from app.core.inputs.presets import HARDWARE, MODELS


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("model", "hardware", "gpus", "batch"),
    [
        ("gpt3-175b", "a100-80g", 1024, 1536),  # pp up to 64: most middle stages skipped
        ("llama3-70b", "h100-sxm", 256, 512),
        ("gpt3-13b", "a100-80g", 64, 256),
    ],
)
def test_pass_equals_estimate_for_every_candidate(model, hardware, gpus, batch):
    m, hw = MODELS[model], HARDWARE[hardware]
    pool = candidates(m, hw, gpus, batch)
    fast, memo = Pass(m, hw, batch), {}
    # Every schedule and ZeRO stage, and pipelines deep enough to have middle stages.
    assert {c.schedule for c in pool} >= {"1f1b", "zb-h1", "zb-h2", "gpipe", "interleaved"}
    assert {c.zero for c in pool} == {0, 1, 2, 3} and max(c.pp for c in pool) >= 8
    peaks = dict(zip(pool, fast.peaks(pool), strict=True))  # batched as plan() prices them
    fits = 0
    for c in pool:
        want = estimate(c, m, hw, batch, memo)
        peak = fast.peak(c)
        assert peak == peaks[c], c
        assert peak == want["peak_bytes"], c
        assert (peak <= fast.capacity) == want["fits"], c
        if want["fits"]:
            fits += 1
            assert fast.tokens_per_s(c) == want["tokens_per_s"], c
    assert 0 < fits < len(pool)
