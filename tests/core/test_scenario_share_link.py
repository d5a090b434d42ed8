"""A scenario's share link (Scenario.query) opens the same scenario: the default model is
named once a shape field is set, since a shape field without model= reads as model=custom."""

import pytest

from app.core.inputs.scenario import Scenario


@pytest.mark.parametrize(
    "fields",
    [
        {"model": "llama3-8b", "seq_len": 32768},  # the default model, a longer sequence
        {"model": "llama3-8b", "seq_len": 131072, "cp": 4, "dp": 1},
        {"model": "llama3-8b", "vocab": 64000},
        {"model": "mixtral-8x7b", "top_k": 1},
        {"layers": 4, "hidden": 256, "heads": 4},  # custom
        {"cp": 2},  # no shape field: the default model stays out of the link
    ],
)
def test_the_link_round_trips(fields):
    s = Scenario(**fields)
    q = s.query()
    assert Scenario.model_validate(q) == s
    if "seq_len" in fields or "vocab" in fields:
        assert q["model"] == "llama3-8b"
    if fields == {"cp": 2}:
        assert "model" not in q
