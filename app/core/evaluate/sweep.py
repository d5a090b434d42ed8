"""Sweeps: one knob over a range of values, one line per schedule or per value of a second
knob (cp, ep and the routing imbalance among them). Each point is the cost model's numbers
for that exact scenario, or, when the scenario is invalid, the field to change and why:
invalid points are marked, never dropped.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from app.core.evaluate.one_scenario import Registry, prepare
from app.core.evaluate.sweep_params import (
    KNOBS,
    MAX_SLOTS,
    Sweep,
    SweepParams,
    resolve,
)
from app.core.evaluate.sweep_params import (
    SWEEP_KEYS as SWEEP_KEYS,
)
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import MAX_SIMULATED_ACTIONS, Scenario, ScenarioError
from app.core.inputs.teaching import teaching_durations
from app.core.layout.topology import Layout
from app.core.schedules import FORWARD_ONLY, MULTI_CHUNK, V_SHAPED, ScheduleName
from app.core.simulate import simulate
from app.core.views import flow_comm
from app.core.views.prediction import Prediction


def _v_for(schedule: str, v: int) -> int:
    """A schedule's line keeps the base's chunks per rank where that schedule allows them."""
    if ScheduleName(schedule) in MULTI_CHUNK:
        return max(v, 2)  # the interleaved schedules need >= 2 chunks per rank
    return min(v, 2) if ScheduleName(schedule) in V_SHAPED else 1


def _set(raw: dict[str, Any], knob: str, value: int | float, global_batch: int) -> None:
    """Set one knob on a scenario's raw fields; ScenarioError when no scenario matches."""
    if knob == "dp_fixed_global_batch":
        mbs = raw["micro_batch_size"]
        if global_batch % (value * mbs):
            raise ScenarioError.keyed(
                "dp", "sweep.global_batch",
                "global batch {batch} is not divisible by dp*micro_batch_size = {dp}*{mbs}",
                batch=global_batch, dp=value, mbs=mbs,
            )  # fmt: skip
        raw["microbatches"] = global_batch // (value * mbs)  # B = dp * b * m, B held fixed
    raw[KNOBS[knob][0]] = value


def _scenario(base: Scenario, sw: Sweep, line: int | float | str, value: int | float) -> Scenario:
    raw = base.model_dump()
    # Global batch = dp * micro-batch size * micro-batches, taken from the base scenario.
    global_batch = base.dp * base.micro_batch_size * base.microbatches
    settings = [(sw.knob, value)]
    if sw.series == "schedule":
        raw.update(schedule=line, virtual_stages=_v_for(str(line), base.virtual_stages))
    elif sw.series == "fp8":
        raw["fp8"] = line  # a recipe on each line, the base's scaling left as it is
    elif sw.series != "none":
        settings.append((sw.series, line if isinstance(line, float) else int(line)))
    # dp at a fixed global batch goes last: it reads the micro-batch size the other set.
    for knob, v in sorted(settings, key=lambda kv: kv[0] == "dp_fixed_global_batch"):
        _set(raw, knob, v, global_batch)
    return Scenario.model_validate(raw)


def _invalid(x: int | float, exc: Exception, query: dict[str, str] | None) -> dict[str, Any]:
    """An invalid point: the field and the English reason, with the reason's message key
    and params (pydantic's error type and ctx) so a page can word it in its language."""
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else "query"
        reason = str(err.get("msg", "invalid value"))
        key, params = str(err.get("type")), {k: str(v) for k, v in err.get("ctx", {}).items()}
    else:
        field, reason = getattr(exc, "field", "query"), getattr(exc, "reason", str(exc))
        key, params = getattr(exc, "key", None), dict(getattr(exc, "params", {}))
    return {"x": x, "valid": False, "query": query, "field": field, "reason": reason,
            "key": key, "params": params}  # fmt: skip


def _axis_shares(s: Scenario, layout: Layout, cost: Prediction, hardware: Registry) -> dict:
    """With cp or ep > 1: the busiest rank's exposed CP ring and EP all-to-all seconds per
    step over the step, as tp_share counts TP (every micro-batch through each of its chunks,
    forward and backward), from the flow's per-chunk numbers (views/flow_comm.py)."""
    hw = specs.hardware_of(s, hardware)
    lc = flow_comm.layer_comm(cost.model, hw, cost.training, layout, s.routing_imbalance, 1.0)
    if lc is None:
        return {}
    layers = [list(row) for row in cost.pipeline.layers]
    step = cost.sections["step_time_s"]
    exposed = flow_comm.step_exposed_s(lc, layers, s.microbatches, s.schedule)
    return {f"{key}_share": seconds / step for key, seconds in exposed.items()}


def _metrics(s: Scenario, hardware: Registry) -> dict[str, Any]:
    layout, actions, cost = prepare(s, hardware)
    teaching = teaching_durations(s)
    # With teaching units the pipeline is drawn (and its bubble counted) in those units.
    tl = (
        cost.timeline
        if teaching is None
        else simulate(s.schedule, actions, teaching, s.virtual_stages)
    )
    sec, step = cost.sections, cost.sections["step_time_s"]
    # Each micro-batch crosses each of the rank's chunk boundaries forward and backward
    # (forward only for the naive demo).
    crossings = 1 if s.schedule in FORWARD_ONLY else 2
    pp_s = crossings * s.microbatches * s.chunks * cost.durations[0].p2p
    out = {
        "bubble_fraction": tl.bubble_fraction,
        "bubble_over_ideal": tl.bubble_over_ideal,
        "peak_bytes": sec["memory"]["peak_bytes"],
        "capacity_bytes": sec["memory"]["capacity_bytes"],
        "step_time_s": step,
        "tokens_per_s": sec["tokens_per_s"],
        "tp_share": sec["breakdown"]["tp_s"] / step,  # seconds on the axis / step seconds
        "pp_share": pp_s / step,
        "dp_share": sec["breakdown"]["dp_s"] / step,
        "mfu": sec["mfu"],
        **_axis_shares(s, layout, cost, hardware),
    }
    if not all(math.isfinite(v) for v in out.values()):
        raise ScenarioError.keyed(
            "query", "sweep.non_finite", "the cost model gave a non-finite number"
        )
    return {**out, "fits": sec["memory"]["fits"]}


def _slots(s: Scenario) -> int:
    """Simulated slots of one point (twice with teaching units); 0 for one check() refuses."""
    slots = s.pp * s.microbatches * s.chunks
    return 0 if slots * 3 > MAX_SIMULATED_ACTIONS else slots * (2 if s.f_time else 1)


def run(base: Scenario, sw: Sweep, hardware: Registry = HARDWARE) -> list[dict[str, Any]]:
    """Every line's points, in x order. Raises ScenarioError if the work is too large."""
    built: list[tuple[int | float | str, int | float, Scenario | Exception]] = []
    for line in sw.lines:
        for x in sw.values:
            try:
                built.append((line, x, _scenario(base, sw, line, x)))
            except ValueError as exc:  # ScenarioError and pydantic's ValidationError
                built.append((line, x, exc))
    work = sum(_slots(s) for _, _, s in built if isinstance(s, Scenario))
    if work > MAX_SLOTS:
        raise ScenarioError.keyed(
            sw.field, "sweep.slots",
            "the sweep would simulate {work} chunk-microbatch slots; at most "
            "{limit} (fewer values, lines, pp or microbatches)", work=work, limit=MAX_SLOTS,
        )  # fmt: skip
    lines = {line: [] for line in sw.lines}
    for line, x, s in built:
        lines[line].append(_point(x, s, hardware))
    return [{"key": str(k), "points": pts} for k, pts in lines.items()]


def _point(x: int | float, s: Scenario | Exception, hardware: Registry) -> dict[str, Any]:
    if not isinstance(s, Scenario):
        return _invalid(x, s, None)
    try:
        return {"x": x, "valid": True, "query": s.query(), **_metrics(s, hardware)}
    except ValueError as exc:  # ScenarioError, or the simulator refusing the schedule
        return _invalid(x, exc, s.query())


def sweep(base: Scenario, params: SweepParams, hardware: Registry = HARDWARE) -> dict[str, Any]:
    """The whole sweep as JSON-ready data: lines of points, each with its share link."""
    sw = resolve(params)
    lines = run(base, sw, hardware)
    points = [p for line in lines for p in line["points"]]
    return {
        "knob": sw.knob,
        "values": list(sw.values),
        "series": sw.series,
        "base": base.query(),
        "global_batch": base.dp * base.micro_batch_size * base.microbatches,
        "lines": lines,
        "count": len(points),
        "invalid": sum(not p["valid"] for p in points),
    }
