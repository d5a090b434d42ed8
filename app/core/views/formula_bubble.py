"""The bubble card: (p-1)/(m+p-1) with the scenario's p and m, beside the simulated bubble,
and the gap split into causes by re-simulating without each effect in turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.inputs.scenario import Scenario
from app.core.schedules import SPLIT_BACKWARD, V_SHAPED, Action
from app.core.simulate import Durations, DurationsLike, Timeline, per_chunk, simulate
from app.core.views.formula_tokens import Token, cause, num
from app.core.views.prediction import Prediction

# Re-simulating the pipeline three more times stays cheap up to this many chunk-microbatches
# (p*m*v); past it the bubble card gives the gap without splitting it into causes.
MAX_DECOMPOSED = 4_096
# Causes smaller than this (a twentieth of a point) are rounding, not a cause.
MIN_DELTA = 5e-4


def looped(s: Scenario) -> bool:
    """v chunks per rank placed round-robin (interleaved, breadth-first): the bubble / v."""
    return s.chunks > 1 and s.schedule not in SPLIT_BACKWARD and s.schedule not in V_SHAPED


def closed_bubble(s: Scenario) -> float:
    """(p-1)/(v·m + p-1): idle share of p·makespan with equal stages and no p2p time."""
    # Narayanan et al. 2021 §2.2.1 (GPipe/1F1B, v = 1) and §2.2.2 (interleaved: bubble / v);
    # breadth-first looping places chunks alike, same bubble (Lamy-Poirier 2023, Breadth-First
    # Pipeline Parallelism); equal stages without p2p reproduce it in simulate.
    p, slots = s.pp, s.microbatches * (s.chunks if looped(s) else 1)
    return (p - 1) / (slots + p - 1)


def bubble_chain(s: Scenario) -> list[list[Token]]:
    p, m, v = s.pp, s.microbatches, s.chunks
    if looped(s):
        sym = "r = (p − 1) / (v·m + p − 1)"
        den: list[Token] = [num(v), "·", num(m), " + ", num(p), " − 1)"]
        total = v * m + p - 1
    else:
        sym, den, total = "r = (p − 1) / (m + p − 1)", [num(m), " + ", num(p), " − 1)"], m + p - 1
    return [[sym], ["(", num(p), " − 1) / (", *den], [num(p - 1), " / ", num(total)]]


def _without_tp(rows: list[list[Durations]], layers: list[list[int]], tp_layer: float):
    return [
        [
            replace(d, f=d.f - n * tp_layer, b=d.b - n * tp_layer)
            for d, n in zip(row, ls, strict=True)
        ]
        for row, ls in zip(rows, layers, strict=True)
    ]


def _stage_work(rows: list[list[Durations]]) -> list[float]:
    return [sum(d.f + d.b + d.w for d in row) for row in rows]


def bubble_causes(
    s: Scenario, cost: Prediction, shown: Timeline, actions: list[list[Action]],
    teaching: DurationsLike | None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Peel the simulation back to the closed form one effect at a time (TP time, p2p hops,
    uneven stages, the schedule's own order); each delta is one re-simulation's difference."""
    sim = lambda d: simulate(s.schedule, actions, d, s.virtual_stages).bubble_fraction  # noqa: E731
    unit = "u" if teaching else "s"
    out, now = [], shown.bubble_fraction
    if teaching is not None:
        rows = per_chunk(teaching, s.pp, s.chunks)  # one, per rank or per rank and chunk
    else:
        rows, layers = cost.chunk_durations, cost.pipeline.layers
        busiest = max(sum(row) for row in layers)
        tp_layer = cost.tp_pass_s * s.chunks / busiest if busiest else 0.0
        if tp_layer > 0:
            rows = _without_tp(rows, layers, tp_layer)
            before, now = now, sim(rows)
            out.append(cause("formulas.cause.tp", before - now, "pts", num(cost.tp_pass_s, "s")))
    hop = rows[0][0].p2p
    if hop > 0:
        rows = [[replace(d, p2p=0.0) for d in row] for row in rows]
        before, now = now, sim(rows)
        out.append(cause("formulas.cause.p2p", before - now, "pts", num(hop, unit)))
    work = _stage_work(rows)
    if len({d for row in rows for d in row}) > 1:
        flat = Durations.mean([d for row in rows for d in row])
        before, now = now, sim(flat)
        slow = work.index(max(work))
        mean = sum(work) / len(work)
        args = (num(slow), num(max(work), unit), num(mean, unit))
        out.append(cause("formulas.cause.uneven", before - now, "pts", *args))
    rest = now - closed_bubble(s)
    if abs(rest) >= MIN_DELTA:
        key = "formulas.cause.zb" if s.schedule in SPLIT_BACKWARD else "formulas.cause.schedule"
        out.append(cause(key, rest, "pts", s.schedule.value))
    return [c for c in out if abs(c["delta"]["v"]) >= MIN_DELTA]


def bubble_card(
    s: Scenario, cost: Prediction, shown: Timeline, actions: list[list[Action]],
    teaching: DurationsLike | None,
) -> dict[str, Any]:  # fmt: skip
    closed, simulated = closed_bubble(s), shown.bubble_fraction
    card: dict[str, Any] = {
        "id": "bubble",
        "chain": [*bubble_chain(s), [num(closed, "%")]],
        "closed": num(closed, "%"),
        "simulated": num(simulated, "%"),
        "reference": s.schedule in SPLIT_BACKWARD or s.schedule in V_SHAPED,  # 1F1B's form
        "causes": [],
        "decomposed": True,
    }
    if abs(simulated - closed) < MIN_DELTA:
        return card
    if s.pp * s.microbatches * s.chunks > MAX_DECOMPOSED:
        card["decomposed"] = False
        return card
    card["causes"] = bubble_causes(s, cost, shown, actions, teaching)
    return card
