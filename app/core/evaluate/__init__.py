"""Drivers. one_scenario runs a Scenario through the stages in order (inputs -> layout ->
schedules -> cost, which simulates -> views); planner, compare, sweep and primer run it over
many scenarios. Imports every stage; nothing below imports it.

This module re-exports one_scenario's entry points (evaluate, prepare, check, Registry)."""

from app.core.evaluate.one_scenario import (
    Registry,
    check,
    evaluate,
    layout_json,
    layout_of,
    prepare,
    schedule_json,
    timeline_json,
)

__all__ = [
    "Registry",
    "check",
    "evaluate",
    "layout_json",
    "layout_of",
    "prepare",
    "schedule_json",
    "timeline_json",
]
