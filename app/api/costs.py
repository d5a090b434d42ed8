"""Cost estimates of requests, before any work, in units of the biggest scenario one request
may simulate (1.0: pp*microbatches*chunks at MAX_SIMULATED_ACTIONS/3, ~180 MB and ~2 s of
CPU for one evaluate). The limiter (app/api/limits.py) turns them into slots: under
``heavy_light_cost`` none, else one, two for a compare of several big scenarios, and so on up
to every slot.

Each estimate is an upper bound read from the request's validated parameters (and, for a
run, its stored RunInfo), so it is known before the work starts (issue 26 item 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from app.core.inputs.protocol import MAX_STEP_EVENTS, RunInfo
from app.core.inputs.scenario import MAX_SIMULATED_ACTIONS, Scenario

# Chunk-microbatches of the biggest scenario (app/core/evaluate/one_scenario.py, check).
SCENARIO_UNIT = MAX_SIMULATED_ACTIONS // 3
# Records one /steps page parses at most: whole steps, never more events than this. A parsed
# record event is ~1.2 KB (233 MB per 200k events, app/api/runs.py): ~280 MB at the bound.
STEPS_PAGE_EVENTS = 4 * MAX_STEP_EVENTS
# Parsed events one unit stands for: a full page and the whole step it may run past.
EVENTS_UNIT = STEPS_PAGE_EVENTS + MAX_STEP_EVENTS


# A plan: at most ``plan_max_candidates`` (4,096) candidates at ~0.8 ms each, about one
# biggest scenario's CPU (app/api/plan.py), so one slot whatever its query.
PLAN = 1.0


def scenario(s: Scenario) -> float:
    """One evaluate: its simulated chunk-microbatches over the biggest allowed."""
    return s.pp * s.microbatches * s.chunks / SCENARIO_UNIT


def query(params: Mapping[str, str], cache: Any) -> float:
    """A page's scenario, from its query: none when it is invalid (refused before any work)
    or already kept in the app's ScenarioCache (``cache``), else as ``scenario``."""
    raw = {k: v for k, v in params.items() if k in Scenario.model_fields}
    try:
        s = Scenario.model_validate(raw)
    except ValidationError:
        return 0.0
    return 0.0 if cache.kept(s) is not None else scenario(s)


def scenarios(members: Iterable[Scenario]) -> float:
    """A compare evaluates each member in turn and keeps every view model until the end."""
    return sum(scenario(s) for s in members)


def steps_limit(info: RunInfo, limit: int) -> int:
    """A /steps page's record limit, lowered so it parses at most STEPS_PAGE_EVENTS events:
    20,000 records of 20,000 events would be 400M events (hundreds of GB). The reader still
    returns one whole step past the limit, so paging goes on with next_since."""
    return max(1, min(limit, STEPS_PAGE_EVENTS // info.events_cap()))


def steps(info: RunInfo, limit: int) -> float:
    """Records a /steps page can return (its limit and one whole step past it), each at the
    run's event cap: what is stored is not known before it is read."""
    return (limit + info.world_size) * info.events_cap() / EVENTS_UNIT


def analysis(info: RunInfo, window: int) -> float:
    """An analysis parses its window of the run's records (each at the run's event cap) and
    replays one step of its schedule. At most one slot, as before: runs.analysis_key bounds
    the window to MAX_WINDOW_EVENTS whatever the run, and the cap is an upper bound far above
    what most records hold, so more would make every small run's analysis take every slot."""
    parsed = window * info.world_size * info.events_cap() / EVENTS_UNIT
    return min(1.0, parsed + info.pp * info.microbatches * info.chunks / SCENARIO_UNIT)


# A whole-run query over a run's action segments (app/live/actions_query.py): one slot
# whatever the run. DuckDB parses and scans, not Python, within its own memory cap
# (actions_segments.duck: 1 GB, spilling past it) and threads, so what one such query holds
# does not grow with the run's records the way a parsed window does.
ACTIONS = 1.0
