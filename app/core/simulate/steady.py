"""The steady-state period of back-to-back steps: the time from one step's start to the next
step's start when each rank begins step k+1 as soon as its own step k is done, so step k+1's
warm-up runs during step k's drain.

Measured, not derived: each rank's order is followed by the first action of the next step
(its micro-batch numbered m on, the same dependencies), that is simulated, and the period is
the slowest rank's distance from its first action to that next-step action. Earliest starts
depend only on what comes before, so these are the starts a simulation of two whole steps
gives, at the cost of one step (tests/core/test_steady_state.py checks both). A rank cannot
start step k+1 before its own step k is done, so the period is at least its busy time.
Which schedules may overlap their steps is the views' rule (views/step_period.py).
"""

from __future__ import annotations

from app.core.schedules import Action, ScheduleName
from app.core.simulate.timeline import DurationsLike, simulate


def with_next_start(actions: list[list[Action]]) -> list[list[Action]]:
    """Each rank's order, then its next step's first action (micro-batch + m).

    That action's inputs must be other ranks' first next-step actions or nothing (so for
    ZB-H2: every rank opens with F of micro-batch 0, which needs only the previous rank's);
    otherwise the simulation cannot finish and says so (deadlock.check_simulated)."""
    m = 1 + max((a.microbatch for row in actions for a in row), default=-1)
    return [
        [*row, row[0]._replace(microbatch=row[0].microbatch + m)] if row else [] for row in actions
    ]


def period(
    name: ScheduleName | str,
    actions: list[list[Action]],
    durations: DurationsLike,
    virtual_stages: int = 1,
) -> float:
    """The slowest rank's start-to-start distance between a step and the next."""
    ahead = simulate(name, with_next_start(actions), durations, virtual_stages)
    return max((starts[-1] - starts[0] for starts in ahead.starts if starts), default=0.0)
