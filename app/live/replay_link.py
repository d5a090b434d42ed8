"""The run page's way back to its scenario: the flow view of the run's configuration with
the run's own measured durations in it (issue 25: "the run opens its scenario with the
measured overlay"). The query is the a-priori prediction's scenario (the probe's model, or
an import's scenario link: app/live/a_priori.py) with each pipeline stage's mean F, B and W
(app/core/fidelity/measured.stage_durations) as the scenario's per-stage times, in
milliseconds, and the fastest receive as its p2p hop: the flow view then animates the
replay the run page draws, where every view and knob of the planning side applies to it.

The mesh is the run's: the prediction's scenario carries its dp, tp, pp, cp and rank order
(as RunInfo.order spells it), and its ep where that scenario's model has experts to place
(an import's scenario link to a MoE model). The probe's GPT, or a link to a dense model,
has none: EP adds no ranks, so the view opens the same ranks without the expert groups, and
``left_out`` names ep for the page to say so.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from app.core.inputs.protocol import RunInfo
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import SPLIT_BACKWARD
from app.core.simulate import Durations


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}"


def flow_query(prior: dict[str, Any], durations: list[Durations]) -> dict[str, str] | None:
    """The flow view's query, or None when there is no scenario to open (the cost model
    refused the configuration) or the measured times do not make a valid one (a stage that
    timed no forward)."""
    base = prior.get("query")
    if base is None or not durations:
        return None
    query = dict(base)
    query["f_time"] = ",".join(_ms(d.f) for d in durations)
    query["b_time"] = ",".join(_ms(d.b) for d in durations)
    if query.get("schedule") in {s.value for s in SPLIT_BACKWARD}:
        query["w_time"] = ",".join(_ms(d.w) for d in durations)
    query["p2p_time"] = _ms(sum(d.p2p for d in durations) / len(durations))
    try:
        Scenario.model_validate(query)
    except (ValidationError, ScenarioError):
        return None
    return query


def left_out(info: RunInfo, query: dict[str, str] | None) -> list[str]:
    """The run's axes the flow view's scenario does not draw: ep, when the run has it and the
    scenario (no experts to place: see the module docstring) does not."""
    if query is None or info.ep == 1:
        return []
    return [] if query.get("ep") == str(info.ep) else ["ep"]
