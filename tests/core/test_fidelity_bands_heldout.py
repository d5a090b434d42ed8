"""Every band's rows are held out: each row's error is the one its step time has at the GEMM
ceiling fitted without its source (app/core/fidelity/fit.py), and the fit that finds those
ceilings from a few priced points agrees with pricing every row at every ceiling."""

import random
import statistics
from dataclasses import replace

import pytest

from app.core.evaluate import evaluate
from app.core.fidelity import bands, fit
from app.core.fidelity import board as fidelity
from app.core.fidelity.board import Row
from app.core.fidelity.published_runs import RUNS
from app.core.inputs.hardware import HARDWARE

GRID = fit.GRID


# --- the search, on made-up curves -----------------------------------------------------------


def test_the_pick_is_the_least_median_within_the_limit_else_the_least_max():
    errors = {0.6: [0.0, 0.2], 0.7: [0.05, 0.06], 0.8: [0.01, 0.14], 0.9: [0.01, 0.14]}
    assert fit.pick_ceiling(errors, (0.6, 0.7, 0.8, 0.9)) == 0.7  # 0.6's max is over 15%
    assert fit.pick_ceiling({0.6: [0.3], 0.7: [-0.2]}, (0.6, 0.7)) == 0.7
    assert fit.pick_ceiling({0.6: [0.1], 0.7: [-0.1]}, (0.6, 0.7)) == 0.6  # ties: the first


def convex_step(rng: random.Random):
    """A step time convex in 1 / ceiling: the max of a few lines (critical paths), each a
    fixed part plus a part proportional to 1 / ceiling."""
    lines = [(rng.uniform(0, 5), rng.uniform(0.5, 8)) for _ in range(rng.randint(1, 4))]
    return lambda c: max(a + b / c for a, b in lines)


@pytest.mark.parametrize("seed", range(40))
def test_bounds_hold_and_the_bounded_pick_is_the_brute_force_pick(seed):
    rng = random.Random(seed)
    steps = [convex_step(rng) for _ in range(rng.randint(2, 9))]
    published = [f(rng.choice(GRID)) * rng.uniform(0.9, 1.1) for f in steps]
    curves = [fit.Curve(p) for p in published]
    priced = []

    def price(i, c):
        priced.append((i, c))
        curves[i].add(c, steps[i](c))

    for i in range(len(steps)):
        for c in (0.74, GRID[0], GRID[-1]):
            price(i, c)
    for cv, f in zip(curves, steps, strict=True):
        for c in GRID:
            lo, hi = cv.bounds(c)
            assert lo * (1 - 1e-9) <= f(c) <= hi * (1 + 1e-9)
            if lo == hi:
                assert f(c) == pytest.approx(lo, rel=1e-9)
    brute = {c: [(f(c) - p) / p for f, p in zip(steps, published, strict=True)] for c in GRID}
    assert fit.pick_bounded(curves, GRID, price) == fit.pick_ceiling(brute)
    assert len(set(priced)) < len(steps) * len(GRID)


def test_priced_points_that_are_not_convex_are_seen():
    cv = fit.Curve(1.0)
    for c, v in ((0.6, 3.0), (0.7, 2.9), (0.8, 1.0)):  # a bump above the chord
        cv.add(c, v)
    assert not cv.convex()


# --- held out: the ceiling is picked without the row's own source ---------------------------

BASE = next(r for r in RUNS if r.id == "narayanan2021-t1-r5")
SMALL = (0.6, 0.7, 0.8)


def synthetic(specs):
    """Rows (source, hardware, published, step(c)) with every ceiling of SMALL priced."""
    rows, curves = [], {}
    for i, (source, hw, published, step) in enumerate(specs):
        rows.append(Row(replace(BASE, source=f"{source} et al.", hardware=hw), "", published,
                        step(0.7), 1.0, {}, hw))  # fmt: skip
        curves[i] = fit.Curve(published)
        for c in SMALL:
            curves[i].add(c, step(c))
    return rows, curves


def test_a_rows_held_out_ceiling_never_sees_its_own_source():
    # A's rows are right at 0.6, B's and C's at 0.8: held out, A is predicted at 0.8.
    def at(best):
        return lambda c: 10 * best / c

    specs = [("A", "a100-80g", 10.0, at(0.6)), ("A", "a100-80g", 10.0, at(0.6)),
             ("B", "a100-80g", 10.0, at(0.8)), ("C", "a100-80g", 10.0, at(0.8)),
             ("D", "h100-sxm", 10.0, at(0.7))]  # fmt: skip
    rows, curves = synthetic(specs)
    f = fit.fit(rows, curves, HARDWARE, SMALL)
    by = {fidelity.source_family(r.run): r for r in f.rows}
    assert by["A"].held_out_ceiling == 0.8 and by["A"].held_out_pool == "generation"
    assert by["A"].held_out_error == pytest.approx(0.6 / 0.8 - 1)
    # B held out: A's rows (right at 0.6) and C's (0.8) are within 15% together at 0.7 only.
    assert by["B"].held_out_ceiling == 0.7
    # D is Hopper's only source: its ceiling comes from every other source's rows.
    assert (by["D"].held_out_ceiling, by["D"].held_out_pool) == (0.7, "all")
    # Changing A's own rows changes every ceiling but A's.
    moved = [(s, hw, p, at(0.7) if s == "A" else step) for s, hw, p, step in specs]
    g = fit.fit(*synthetic(moved), HARDWARE, SMALL)
    again = {fidelity.source_family(r.run): r.held_out_ceiling for r in g.rows}
    assert again["A"] == 0.8 and again["D"] == 0.8


def test_a_single_source_has_nothing_to_be_held_out_against():
    rows, curves = synthetic([("A", "a100-80g", 10.0, lambda c: 7 / c)] * 2)
    assert [r.held_out_error for r in fit.fit(rows, curves, HARDWARE, SMALL).rows] == [None, None]


# --- the board's own rows --------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    return fit.fitted()


def test_every_band_counts_each_row_with_its_held_out_error(fitted):
    by_id = {r.run.id: r for r in fitted.rows if not r.reason}
    assert all(r.held_out_error is not None for r in by_id.values())
    for k in bands.kinds(fitted.rows):
        counted = [by_id[i] for i in k["ids"]]
        assert k["rows"] == len(counted) > 0
        assert k["median_abs"] == statistics.median(abs(r.held_out_error) for r in counted)
        assert k["max_abs"] == max(abs(r.held_out_error) for r in counted)
    # Somewhere held out is not in-sample: the constants were fitted on these rows.
    assert any(r.held_out_error != r.error for r in by_id.values())


def test_each_held_out_ceiling_is_the_fit_without_the_rows_source(fitted):
    idx = sorted(fitted.curves)
    # Every row at every ceiling (row by row: the fit keeps one row's pricer at a time).
    table = {j: {c: fitted.value(j, c) for c in GRID} for j in idx}
    family = {i: fidelity.origin(fitted.rows[i].run) for i in idx}  # what a hold-out leaves out
    for i in idx:
        r = fitted.rows[i]
        gen = fitted.group(i)
        # FP8 rows enter no pool (fit.fits_on): they are predicted, never fitted on.
        others = [j for j in idx if family[j] != family[i] and fit.fits_on(fitted.rows[j])]
        on = [j for j in others if fitted.group(j) == gen] or others
        assert r.held_out_pool == ("generation" if fitted.group(on[0]) == gen else "all")
        errors = {
            c: [
                (table[j][c] - fitted.rows[j].published_s) / fitted.rows[j].published_s for j in on
            ]  # fmt: skip
            for c in GRID
        }
        assert r.held_out_ceiling == fit.pick_ceiling(errors), r.run.id
    # The fit falls back to every source only for a generation with a single source.
    alone = {
        fitted.rows[i].run.id
        for i in idx
        if not any(
            family[j] != family[i] and fitted.group(j) == fitted.group(i)
            for j in idx
            if fit.fits_on(fitted.rows[j])
        )
    }
    assert {r.run.id for r in fitted.rows if r.held_out_pool == "all"} == alone


def test_each_held_out_time_is_what_evaluate_gives_at_that_ceiling(fitted):
    """Checked through evaluate, not the fit's pricer: the board's row at its preset, every
    row the fit moved to another ceiling at that ceiling."""
    for r in fitted.rows:
        if r.reason:
            continue
        preset = HARDWARE[r.hardware].efficiency.gemm_max_fraction
        if r.held_out_ceiling == preset:
            assert r.held_out_s == r.predicted_s
            continue
        registry = fidelity.with_gemm_ceiling(HARDWARE, r.hardware, r.held_out_ceiling)
        view = evaluate(fidelity.scenario_of(r.run), registry)
        assert r.held_out_s == pytest.approx(view["step_time_s"], rel=1e-9), r.run.id
