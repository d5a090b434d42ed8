"""Which pipeline step time a page shows: one step alone (its makespan), or the steady-state
period of back-to-back steps, and the bubble over that time.

ZB-H2 reaches zero bubble only in the steady state. Qi et al., "Zero Bubble Pipeline
Parallelism" (ICLR 2024, arXiv 2401.10241) §4 replace the optimizer's synchronisation before
each step with a post-validation after it, so a rank starts step k+1 once its own step k is
done: the next step's warm-up fills this step's drain (§3.1, Figure 3's parallelogram). Every
other schedule here keeps the synchronisation, so its step is its single-step makespan.
"""

from __future__ import annotations

from typing import Any

from app.core.schedules import Action, ScheduleName
from app.core.simulate import DurationsLike, Timeline, steady
from app.core.views.formula_tokens import num

# The schedules whose steps overlap: ZB-H2, which the paper runs with post-validation (§4).
OVERLAPPED = frozenset({ScheduleName.zb_h2})

# What each figure is, in English; the page shows the catalogue's text under the same key.
LABELS = {
    "steady_state": "steady state: next step's warm-up overlaps this step's drain "
    "(Qi et al. 2024 §4 post-validation)",
    "single_step": "single step: the next step waits until this one has drained",
}


def _bubble(busy: list[float], period: float) -> float:
    # Narayanan et al. 2021 §2.2.1's idle share, over one period instead of one makespan.
    return 1.0 - sum(busy) / (len(busy) * period) if period > 0 else 0.0


def step_period(
    name: ScheduleName,
    actions: list[list[Action]],
    shown: Timeline,
    durations: DurationsLike,
    virtual_stages: int,
    unit: str,
) -> dict[str, Any]:
    """The step figure for ``shown`` (simulated with ``durations``), both figures beside it:
    ``period`` is what the page shows, ``single_step`` the makespan of one step alone; ``args``
    are the page sentence's tokens (period, single step, the single step's bubble), times in
    ``unit`` ("u" teaching units or "s", formula_tokens)."""
    overlapped = name in OVERLAPPED
    period = (
        steady.period(name, actions, durations, virtual_stages) if overlapped else shown.makespan
    )
    shown_as = "steady_state" if overlapped else "single_step"
    return {
        "shown": shown_as,
        "key": f"step_period.{shown_as}",
        "label": LABELS[shown_as],
        "period": period,
        "single_step": shown.makespan,
        "bubble_fraction": _bubble(shown.busy, period),
        "single_step_bubble_fraction": shown.bubble_fraction,
        "args": [num(period, unit), num(shown.makespan, unit), num(shown.bubble_fraction, "%")],
    }
