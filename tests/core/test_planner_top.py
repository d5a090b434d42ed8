"""The planner's ranking does not depend on how many rows are asked for: the shortlist it
simulates has a fixed size (planner.SHORTLIST), siblings included, and ``top`` only cuts it.
Before, ``top`` sized the shortlist, so a DualPipeV row simulated at top=15 beat the winner
of top=10 (Llama 3 70B on 256 H100s: zb-h1 216K tokens/s at top=10, dualpipev 245K at 15)."""

import pytest

from app.core.evaluate import planner

# Small enough to plan in well under a second each; at each, the shortlist sized by top
# used to change the first rows (checked against the code before the fix).
GRID = [
    ("gpt3-13b", "a100-80g", 32, 128),
    ("llama3-8b", "a100-80g", 32, 256),
    ("llama3-8b", "h100-sxm", 16, 64),
]


def _shown(rows: list[dict]) -> list[tuple]:
    return [(r["query"], r["tokens_per_s"], r["tight"]) for r in rows]


@pytest.mark.parametrize(("model", "hardware", "gpus", "batch"), GRID)
def test_the_first_k_rows_of_top_k_are_the_first_k_of_top_50(model, hardware, gpus, batch):
    wide = planner.plan(model, hardware, gpus, batch, top=50)
    assert len(wide["results"]) >= 10
    for k in (3, 10):
        narrow = planner.plan(model, hardware, gpus, batch, top=k)
        assert _shown(narrow["results"]) == _shown(wide["results"][:k]), k
        assert narrow["searched"] == wide["searched"]
