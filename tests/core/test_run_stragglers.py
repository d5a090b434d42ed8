"""Whole-run stragglers from per-rank medians (app/core/traces/run_stragglers.py): the
window analysis's rules applied to one figure per rank and phase."""

from __future__ import annotations

import pytest

from app.core.layout.topology import Layout, parse_order
from app.core.traces.run_stragglers import find_run_stragglers

LAYOUT = Layout(2, 2, 2, parse_order("tp-pp-dp"), 8)  # dp 2 x tp 2 x pp 2


def _medians(**changed: dict[str, float]) -> dict[int, dict[str, float]]:
    base = {"compute": 0.1, "tp": 0.01, "dp": 0.002, "pp_wait": 0.004, "step": 0.15}
    return {r: base | changed.get(f"r{r}", {}) for r in range(LAYOUT.world_size)}


def test_nobody_when_every_rank_is_alike():
    assert find_run_stragglers(_medians(), LAYOUT) == []


def test_a_slow_rank_against_its_stage():
    found = find_run_stragglers(_medians(r5={"compute": 0.15}), LAYOUT)
    assert [(s.cause, s.phase, s.ranks) for s in found] == [("rank", "compute", (5,))]
    assert found[0].ratio == pytest.approx(1.5) and found[0].excess_s == pytest.approx(0.05)


def test_a_slow_tp_link_with_every_members_compute_normal():
    group = next(g for g in LAYOUT.groups("tp") if 0 in g)
    slow = {f"r{r}": {"tp": 0.04, "step": 0.18} for r in group}
    found = find_run_stragglers(_medians(**slow), LAYOUT)
    assert [(s.cause, s.phase, s.ranks) for s in found] == [("link", "tp", tuple(group))]


def test_an_excess_under_the_floor_names_nobody():
    # 30% over its stage, but 0.03 s is under 10% of a 0.5 s median step
    slow = {f"r{r}": {"step": 0.5} for r in range(LAYOUT.world_size)}
    slow["r3"] = {"compute": 0.13, "step": 0.5}
    assert find_run_stragglers(_medians(**slow), LAYOUT) == []
    # the same excess is over 10% of a 0.15 s step
    assert find_run_stragglers(_medians(r3={"compute": 0.13}), LAYOUT)[0].ranks == (3,)
    assert find_run_stragglers({}, LAYOUT) == []
