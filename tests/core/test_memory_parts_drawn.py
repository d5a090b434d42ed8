"""Every memory component the core prices is drawn: the pages' stacked bars (the overview's
memory card, compare's memory chart) take their parts from palette.js MEMORY_PARTS, so a part
missing there leaves a stack short of the total it is drawn against."""

import re
from pathlib import Path

import pytest

from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario

PALETTE = Path(__file__).resolve().parents[2] / "static" / "js" / "palette.js"
# Not parts: the stage's index, layers and parameter count, and the sums of the parts.
NOT_PARTS = {"stage", "layers", "params", "allocated_bytes", "reserved_bytes", "total_bytes"}


def drawn_parts() -> list[str]:
    block = PALETTE.read_text().split("export const MEMORY_PARTS = [", 1)[1].split("];", 1)[0]
    return re.findall(r'\["(\w+_bytes)"', block)


@pytest.mark.parametrize("query", [{"zero": 3, "dp": 8, "tp": 1, "pp": 1}, {"pp": 4}])
def test_every_part_of_a_stage_is_drawn_and_they_sum_to_its_total(query):
    parts = drawn_parts()
    for stage in evaluate(Scenario(**query))["memory"]["per_stage"]:
        assert set(stage) - NOT_PARTS == set(parts)
        assert sum(stage[k] for k in parts) == pytest.approx(stage["total_bytes"])
