"""The planner never recommends a configuration its own scenario page predicts will not fit:
the search's memory (with the per-process floor and the allocator's share) is the page's."""

import pytest

from app.core.evaluate import planner
from app.core.evaluate.one_scenario import prepare
from app.core.inputs.scenario import Scenario


@pytest.mark.parametrize(
    "query",
    [("llama3-8b", "h100-sxm", 16, 64), ("llama3-70b", "h100-sxm", 64, 128),
     ("gpt3-13b", "a100-80g", 32, 128)],
)  # fmt: skip
def test_every_planned_row_fits_on_its_own_page(query):
    for r in planner.plan(*query, top=10)["results"]:
        memory = prepare(Scenario.model_validate(r["query"]))[2].sections["memory"]
        assert memory["fits"], r["query"]
        # The margin it shows is the page's: capacity less the page's peak.
        assert r["margin_bytes"] == pytest.approx(memory["capacity_bytes"] - memory["peak_bytes"])
