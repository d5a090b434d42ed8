"""A scenario followed through evaluate enters each core package in order and comes back to
none it has left.

The driver (app/core/evaluate/one_scenario.py) calls the stages; what each stage calls below
itself is its own business (import-linter keeps those calls downward). So the sequence that
must be ordered is the driver's: the packages it enters, in time, collapsed where it enters the
same one twice in a row. Shared values are not stages: app.core.inputs (the Scenario and the
specs), app.core.support, and the methods of Layout, Pipeline, Timeline and Durations, which
any stage may read (their lazy tables compute on first read).

The placement (which rank holds which chunk and how many layers) is the schedules stage's:
once it has made the Pipeline, no cost, teach or view function asks the schedule's name for
it again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.evaluate import evaluate, prepare
from app.core.inputs.scenario import Scenario

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
DRIVER = CORE / "evaluate" / "one_scenario.py"
STAGES = ("layout", "schedules", "simulate", "cost", "teach", "views")
SHARED = ("inputs", "support")
VALUE_CLASSES = ("Layout.", "Pipeline.", "Timeline.", "Durations.", "Event.", "Action.")
PLACEMENT = {
    "chunks_per_rank",
    "stage_location",
    "virtual_stage",
    "stages_per_copy",
    "chunk_layers",
    "chunk_ends",
    "default_split",
    "plan",
}


def _package(filename: str) -> str | None:
    path = Path(filename)
    if CORE not in path.parents:
        return None
    parts = path.relative_to(CORE).parts
    return parts[0] if len(parts) > 1 else None


def _caller(frame) -> str:
    """The file that called ``frame``, seeing through support's decorators (gc_paused)."""
    back = frame.f_back
    while back is not None and _package(back.f_code.co_filename) == "support":
        back = back.f_back
    return back.f_code.co_filename if back is not None else ""


def _trace(run) -> tuple[list[str], list[tuple[str, str]]]:
    """(the packages the driver entered, in order; (caller package, placement function) for
    every placement call), while ``run()`` runs."""
    entered: list[str] = []
    placement: list[tuple[str, str]] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        package = _package(code.co_filename)
        qualname = getattr(code, "co_qualname", code.co_name)
        if package is None or package in SHARED or qualname.startswith(VALUE_CLASSES):
            return
        caller = _caller(frame)
        if package == "schedules" and code.co_name in PLACEMENT:
            placement.append((_package(caller) or "", code.co_name))
        first = not entered or entered[-1] != package
        if Path(caller) == DRIVER and Path(code.co_filename) != DRIVER and first:
            entered.append(package)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return entered, placement


SCENARIOS = [
    {},
    {"dp": 2, "tp": 2, "pp": 4, "microbatches": 8, "schedule": "interleaved", "virtual_stages": 2},
    {"pp": 4, "microbatches": 8, "schedule": "zbv"},
    {"pp": 4, "microbatches": 8, "schedule": "dualpipe"},
    {"pp": 4, "microbatches": 8, "schedule": "zb-h1", "f_time": "1", "b_time": "1", "w_time": "1"},
    {"pp": 4, "microbatches": 8, "schedule": "1f1b", "stage_layers": "7,9,9,7"},
    {"pp": 2, "microbatches": 4, "schedule": "naive"},
]


@pytest.mark.parametrize("query", SCENARIOS, ids=lambda q: q.get("schedule", "default"))
def test_evaluate_enters_each_stage_once_and_in_order(query):
    entered, _ = _trace(lambda: evaluate(Scenario(**query)))
    assert entered == sorted(entered, key=STAGES.index), entered
    assert len(entered) == len(set(entered)), f"came back to a stage it had left: {entered}"
    # Every stage takes part: a teaching scenario simulates its own units before the cost.
    teaching = "f_time" in query
    assert entered == [s for s in STAGES if s != "teach" and (s != "simulate" or teaching)]


@pytest.mark.parametrize("query", SCENARIOS, ids=lambda q: q.get("schedule", "default"))
def test_only_the_schedules_stage_and_the_simulator_place_chunks(query):
    """The cost model, the advice and the views read the Pipeline; they never call the
    schedule's placement rules themselves."""
    _, placement = _trace(lambda: evaluate(Scenario(**query)))
    callers = {caller for caller, _ in placement}
    # inputs: the Scenario's own ``chunks`` property, a value reading its schedule.
    assert callers <= {"schedules", "simulate", "evaluate", "inputs"}, placement
    made = [name for caller, name in placement if caller == "evaluate"]
    assert made == ["plan"], "the driver makes the Pipeline once"


def test_prepare_runs_the_same_stages_without_the_views_json():
    entered, _ = _trace(lambda: prepare(Scenario(pp=4, microbatches=8)))
    assert entered == ["layout", "schedules", "cost", "views"]


def test_a_stage_entered_twice_is_caught():
    """The check itself can fail: a driver that goes back to layout after the cost model."""

    def twice():
        from app.core.evaluate.one_scenario import layout_of, prepare

        s = Scenario()
        prepare(s)
        layout_of(s, 8)

    entered, _ = _trace(twice)
    assert len(entered) != len(set(entered))
