"""The GEMM ceilings fitted on the published runs, and each row's held-out error.

The fit (how app/core/inputs/hardware.py's ``gemm_max_fraction`` per generation was chosen) is
a 1-D search over ``GRID``: the least median |error| among the ceilings whose max |error| is
within ``LIMIT``, else the least max (``pick_ceiling``). A row's *held-out* error is its error
at the ceiling that search picks on its generation's rows **from every other source**; when
its generation has no other source (Hopper: one source), on every other source's rows of any
generation (``pool`` "all": what the ceiling would be had this source never been read).

Cheap and exact. The fit needs each row's step time at every ceiling of the grid (36 x 44
simulations, ~36 boards). But a step time is convex in x = 1 / ceiling: each action's
duration is a max of terms affine in x (GEMM seconds ∝ x beside fixed memory, attention,
communication), the simulator's makespan is a max over paths of sums of durations, the
exposed tail a max of such terms. So from a few priced points, convexity bounds every other
grid point between the chord above and the neighbouring secants extended below (``Curve``);
where they meet (within ``TOL``) the value is known. ``pick_bounded`` decides the search on
those bounds and prices a row at a ceiling only where a bound leaves the decision open. Each row
is priced at the preset (the board's own prediction) and at both ends of the grid; most rows
are then straight lines and never priced again. A set of priced points that is not convex
(a cost term this argument missed) makes that row priced at every grid point instead.
bench/fidelity.py --fit --brute prices every row at every ceiling and checks the two agree.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from app.core.evaluate import Registry
from app.core.fidelity.board import Pricer, Row, origin, priced
from app.core.fidelity.kinds import generation
from app.core.fidelity.published_runs import RUNS, PublishedRun
from app.core.inputs.hardware import HARDWARE

GRID: tuple[float, ...] = tuple(round(0.55 + 0.01 * i, 2) for i in range(36))
LIMIT = 0.15  # the target for the max |error|
TOL = 1e-9  # relative gap under which a bounded step time counts as known


def pick_ceiling(errors: Mapping[float, Sequence[float]], grid: Sequence[float] = GRID) -> float:
    """The least median |error| among the ceilings whose max |error| is within LIMIT; if none
    is, the least max. Ties go to the first ceiling of ``grid``."""
    mags = {c: [abs(e) for e in errors[c]] for c in grid}
    ok = [c for c in grid if max(mags[c]) <= LIMIT]
    if ok:
        return min(ok, key=lambda c: statistics.median(mags[c]))
    return min(grid, key=lambda c: max(mags[c]))


class Curve:
    """One row's step time against its GEMM ceiling: the points priced, and the bounds that
    convexity in 1 / ceiling puts on every other one."""

    def __init__(self, published_s: float) -> None:
        self.published_s = published_s
        self.points: dict[float, float] = {}

    def add(self, ceiling: float, step_s: float) -> None:
        self.points[ceiling] = step_s

    def bounds(self, ceiling: float) -> tuple[float, float]:
        """(lowest, highest) step time at ``ceiling``; equal when known."""
        if ceiling in self.points:
            v = self.points[ceiling]
            return v, v
        x = 1.0 / ceiling
        pts = sorted((1.0 / c, v) for c, v in self.points.items())
        left = [p for p in pts if p[0] < x]
        right = [p for p in pts if p[0] > x]
        hi = _line(left[-1], right[0], x) if left and right else float("inf")
        lo = 0.0
        if len(left) >= 2:
            lo = max(lo, _line(left[-2], left[-1], x))
        if len(right) >= 2:
            lo = max(lo, _line(right[0], right[1], x))
        return (hi, hi) if hi - lo <= TOL * hi else (lo, hi)

    def value(self, ceiling: float) -> float | None:
        lo, hi = self.bounds(ceiling)
        return hi if lo == hi else None

    def error_bounds(self, ceiling: float) -> tuple[float, float]:
        """(lowest, highest) |error| at ``ceiling``."""
        lo, hi = self.bounds(ceiling)
        a, b = (
            (lo - self.published_s) / self.published_s,
            (hi - self.published_s) / self.published_s,
        )
        if a >= 0:
            return a, b
        if b <= 0:
            return -b, -a
        return 0.0, max(-a, b)

    def convex(self) -> bool:
        """Whether the priced points lie on a convex function of 1 / ceiling."""
        pts = sorted((1.0 / c, v) for c, v in self.points.items())
        triples = zip(pts, pts[1:], pts[2:], strict=False)
        return all(b[1] <= _line(a, c, b[0]) + TOL * b[1] for a, b, c in triples)


def _line(a: tuple[float, float], b: tuple[float, float], x: float) -> float:
    return a[1] + (x - a[0]) * (b[1] - a[1]) / (b[0] - a[0])


def _decide(
    curves: Sequence[Curve], grid: Sequence[float]
) -> float | tuple[list[float], list[int]]:
    """pick_ceiling on the curves' bounds: the ceiling when the bounds settle it, else the
    ceilings still contending and the curves (indices) not yet known at them."""
    b = {c: [cv.error_bounds(c) for cv in curves] for c in grid}
    lo_max = {c: max(x[0] for x in b[c]) for c in grid}
    hi_max = {c: max(x[1] for x in b[c]) for c in grid}
    lo_med = {c: statistics.median(x[0] for x in b[c]) for c in grid}
    hi_med = {c: statistics.median(x[1] for x in b[c]) for c in grid}
    known = {c: all(x[0] == x[1] for x in b[c]) for c in grid}
    maybe = [c for c in grid if lo_max[c] <= LIMIT]
    sure = [c for c in grid if hi_max[c] <= LIMIT]
    if not maybe:  # no ceiling meets the limit: the least max
        best = min(grid, key=lambda c: hi_max[c])
        rivals = [c for c in grid if c != best and not (known[c] and known[best])
                  and lo_max[c] <= hi_max[best]]  # fmt: skip
    elif not sure:  # whether any meets it is open
        best, rivals = None, [c for c in maybe if not known[c]]
    else:
        best = min(sure, key=lambda c: hi_med[c])
        # A known ceiling beside a known best is settled (ties go to the first), a known one
        # over the limit is out; any other whose median may be as low contends.
        rivals = [c for c in maybe if c != best and lo_med[c] <= hi_med[best]
                  and not (known[c] and (known[best] or c not in sure))]  # fmt: skip
    if best is not None and not rivals:
        return best
    open_ = [c for c in ([best] if best is not None else []) + rivals if not known[c]]
    return open_, [i for i, cv in enumerate(curves) if any(cv.value(c) is None for c in open_)]


def pick_bounded(
    curves: Sequence[Curve], grid: Sequence[float], price: Callable[[int, float], None]
) -> float:
    """pick_ceiling over the curves, pricing (``price(i, ceiling)``) only what decides it:
    each round, the open point whose |error| bounds are widest."""
    while True:
        out = _decide(curves, grid)
        if isinstance(out, float):
            return out
        ceilings, idx = out

        def width(ic: tuple[int, float]) -> float:
            lo, hi = curves[ic[0]].error_bounds(ic[1])
            return hi - lo

        price(*max(((i, c) for i in idx for c in ceilings), key=width))


def seeded(row: Row, pricer: Pricer, grid: Sequence[float] = GRID) -> Curve:
    """A row's curve from its Pricer: the board's own prediction where the shipped ceiling
    is on the grid, and the grid's two ends (a third point where the preset is off it)."""
    curve = Curve(row.published_s)
    if pricer.ceiling in grid:
        curve.add(pricer.ceiling, pricer.step_s)
    if not fits_on(row):  # it enters no fit: only its held-out ceiling is priced (fit)
        return curve
    for c in (grid[0], grid[-1], grid[len(grid) // 2]):
        if len(curve.points) < 3 and c not in curve.points:
            curve.add(c, pricer.at(c))
    return curve


@dataclass
class Fitted:
    """The fit over a board's rows: the rows with their held-out step times, each row's curve
    (by row index), the ceiling picked without each source (by generation and source family:
    (ceiling, pool)), and, where asked, the ceiling picked on each generation's every row."""

    rows: list[Row]
    curves: dict[int, Curve]
    registry: Registry
    grid: Sequence[float]
    held_out: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    in_sample: dict[str, float] = field(default_factory=dict)
    _pricer: tuple[int, Pricer] | None = None

    def price(self, i: int, c: float, exact: bool = False) -> None:
        """Row i priced at ceiling c (prepared again: one row's actions held at a time).
        ``exact``: c alone, for a row that enters no fit and needs no other ceiling."""
        if self._pricer is None or self._pricer[0] != i:
            self._pricer = (i, priced(self.rows[i].run, self.registry)[1])
        at, curve = self._pricer[1].at, self.curves[i]
        curve.add(c, at(c))
        if not exact and not curve.convex():  # outside the argument: price every ceiling
            for g in self.grid:
                if g not in curve.points:
                    curve.add(g, at(g))

    def value(self, i: int, c: float) -> float:
        """Row i's step time at ceiling c, priced if its curve does not settle it."""
        if self.curves[i].value(c) is None:
            self.price(i, c)
        return self.curves[i].value(c)

    def pick(self, on: Sequence[int]) -> float:
        """pick_ceiling over rows ``on``, pricing only what decides it."""
        curves = [self.curves[j] for j in on]
        return pick_bounded(curves, self.grid, lambda k, c: self.price(on[k], c))

    def group(self, i: int) -> str:
        """What row i's ceiling is fitted with: its generation (or, without one, its profile)."""
        return generation(self.rows[i].hardware) or self.rows[i].hardware


def fits_on(row: Row) -> bool:
    """Whether a row is one the ceilings are fitted on: 16-bit dense rows only. FP8 rows and
    mixture-of-experts rows are predicted with the ceiling fitted on the other sources'
    16-bit dense rows and enter no fit, so adding them moved no other row's figure (the
    profiles' constants came from 16-bit dense rows: hardware.py), and a band that counts
    them counts rows no constant was chosen on."""
    return row.run.precision != "fp8" and not row.run.moe


def fit(
    rows: Sequence[Row],
    curves: dict[int, Curve],
    registry: Registry = HARDWARE,
    grid: Sequence[float] = GRID,
    in_sample: bool = False,
) -> Fitted:
    """Each predicted row held out: predicted at the ceiling picked without its source (the
    module docstring says on what). ``curves[i]``: row i's curve (``seeded``); a row is
    prepared again (board.priced) where its curve needs another point."""
    out = Fitted(list(rows), curves, registry, grid)
    idx = sorted(curves)
    for i in idx:
        if fits_on(rows[i]) and not curves[i].convex():
            out.price(i, grid[0])
    family = {i: origin(rows[i].run) for i in idx}
    fitted_on = [i for i in idx if fits_on(rows[i])]
    for i in idx:
        key = (out.group(i), family[i])
        if key not in out.held_out:
            others = [j for j in fitted_on if family[j] != family[i]]
            pool, on = "generation", [j for j in others if out.group(j) == key[0]]
            if not on:
                pool, on = "all", others
            if not on:
                continue  # a single source: nothing to hold out against
            out.held_out[key] = (out.pick(on), pool)
        c, pool = out.held_out[key]
        if not fits_on(rows[i]) and c not in curves[i].points:
            # FP8 picks per GEMM the cheaper of FP8 and 16-bit, a min that can bend the curve
            # the other way, so convexity bounds nothing there: priced at its ceiling alone (a
            # MoE row too), as a row that enters no fit needs no other.
            out.price(i, c, exact=True)
        out.rows[i] = replace(rows[i], held_out_s=out.value(i, c), held_out_ceiling=c,
                              held_out_pool=pool)  # fmt: skip
    for g in sorted({out.group(i) for i in fitted_on}) if in_sample else ():
        out.in_sample[g] = out.pick([i for i in fitted_on if out.group(i) == g])
    out._pricer = None
    return out


def fitted(
    registry: Registry = HARDWARE,
    runs: Sequence[PublishedRun] = RUNS,
    grid: Sequence[float] = GRID,
    in_sample: bool = False,
) -> Fitted:
    """Every run predicted with ``registry``'s constants, and held out. Each row is prepared
    once and priced at three ceilings, then let go."""
    rows, curves = [], {}
    for run in runs:
        row, pricer = priced(run, registry)
        if pricer is not None:
            curves[len(rows)] = seeded(row, pricer, grid)
        rows.append(row)
    return fit(rows, curves, registry, grid, in_sample)


def board_rows() -> list[Row]:
    """The accuracy board's rows: every run in-sample and held out (app/api/fidelity.py)."""
    return fitted().rows
