"""Sweeps: one knob over a range of values, one line per schedule or per value of a second
knob. Each point is the cost model's numbers for that exact scenario, or, when the scenario
is invalid, the field to change and why: invalid points are marked, never dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.evaluate.one_scenario import Registry, prepare, teaching_durations
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import MAX_SIMULATED_ACTIONS, Scenario, ScenarioError
from app.core.schedules import FORWARD_ONLY, MULTI_CHUNK, V_SHAPED, ScheduleName
from app.core.simulate import simulate
from app.core.support.echo import echo

# Each knob and the scenario fields it sets (the dp knobs differ in what they hold fixed).
KNOBS: dict[str, tuple[str, ...]] = {
    "microbatches": ("microbatches",),
    "pp": ("pp",),
    "tp": ("tp",),
    "dp_fixed_global_batch": ("dp", "microbatches"),
    "dp_fixed_microbatch": ("dp",),
    "virtual_stages": ("virtual_stages",),
    "micro_batch_size": ("micro_batch_size",),
    "seq_len": ("seq_len",),
}
Knob = Literal[
    "microbatches", "pp", "tp", "dp_fixed_global_batch", "dp_fixed_microbatch",
    "virtual_stages", "micro_batch_size", "seq_len",
]  # fmt: skip
SeriesKind = Literal[
    "none", "schedule", "microbatches", "pp", "tp", "dp_fixed_global_batch",
    "dp_fixed_microbatch", "virtual_stages", "micro_batch_size", "seq_len",
]  # fmt: skip
MAX_VALUES = 64  # points on one line
MAX_LINES = 8  # one per schedule (7) fits
MAX_POINTS = 256  # values x lines
MAX_VALUE = 1 << 20
# Simulated chunk-microbatch slots (pp*m*chunks, summed over points): ~7.5 us each, so one
# sweep stays near half a second (a teaching-unit scenario is simulated twice).
MAX_SLOTS = 1 << 16
METRICS = ("bubble_fraction", "bubble_over_ideal", "peak_bytes", "capacity_bytes",
           "step_time_s", "tokens_per_s", "tp_share", "pp_share", "dp_share", "mfu")  # fmt: skip


class SweepParams(BaseModel):
    """The sweep's own URL parameters; every other parameter is the base scenario."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    knob: Knob = Field("microbatches", description="the scenario knob on the x axis")
    values: str | None = Field(
        None, max_length=2000, description="explicit x values, comma-separated (else the range)"
    )
    start: int = Field(1, ge=1, le=MAX_VALUE, description="range: first value")
    stop: int = Field(16, ge=1, le=MAX_VALUE, description="range: last value (inclusive)")
    step: int = Field(1, ge=1, le=MAX_VALUE, description="range: step (linear scale)")
    scale: Literal["linear", "doubling"] = Field("linear", description="range: +step or x2")
    series: SeriesKind = Field("schedule", description="one line per schedule, per value, or one")
    series_values: str | None = Field(
        None, max_length=2000, description="the lines: schedule names or the second knob's values"
    )


SWEEP_KEYS = frozenset(SweepParams.model_fields)


@dataclass(frozen=True)
class Sweep:
    knob: str
    values: tuple[int, ...]
    series: str
    lines: tuple[int | str, ...]  # schedule names, the second knob's values, or ("",)
    field: str = "stop"  # the parameter that sets how many values: "values" or "stop"


def _ints(text: str, field: str) -> tuple[int, ...]:
    out = set()
    for part in (p.strip() for p in text.split(",")):
        if not (part.isascii() and part.isdigit()) or not 1 <= int(part) <= MAX_VALUE:
            raise ScenarioError.keyed(
                field, "sweep.not_whole", "{value} is not a whole number from 1 to {limit}",
                value=echo(part), limit=MAX_VALUE,
            )  # fmt: skip
        out.add(int(part))
    return tuple(sorted(out))


def _range(p: SweepParams) -> tuple[int, ...]:
    if p.stop < p.start:
        raise ScenarioError.keyed(
            "stop", "sweep.stop_start", "stop ({stop}) must be at least start ({start})",
            stop=p.stop, start=p.start,
        )  # fmt: skip
    if p.scale == "doubling":
        count = (p.stop // p.start).bit_length()  # start * 2^k <= stop
        return tuple(p.start << k for k in range(count))
    count = (p.stop - p.start) // p.step + 1
    if count > MAX_VALUES:
        raise ScenarioError.keyed(
            "stop", "sweep.range_count", "{n} values in the range; at most {limit}",
            n=count, limit=MAX_VALUES,
        )  # fmt: skip
    return tuple(range(p.start, p.stop + 1, p.step))


def _x_values(p: SweepParams) -> tuple[int, ...]:
    if not p.values or not p.values.strip():
        return _range(p)
    values = _ints(p.values, "values")
    if len(values) > MAX_VALUES:
        raise ScenarioError.keyed(
            "values", "sweep.values_count", "{n} values; at most {limit}",
            n=len(values), limit=MAX_VALUES,
        )  # fmt: skip
    return values


def _line_keys(p: SweepParams) -> tuple[int | str, ...]:
    text = (p.series_values or "").strip()
    if p.series == "none":
        return ("",)
    if p.series == "schedule":
        known = [s.value for s in ScheduleName]
        # By default the training schedules: naive runs forward only, so its step is no step.
        training = [s.value for s in ScheduleName if s not in FORWARD_ONLY]
        names = [n.strip() for n in text.split(",")] if text else training
        bad = [n for n in names if n not in known]
        if bad:
            raise ScenarioError.keyed(
                "series_values", "sweep.schedule_unknown",
                "unknown schedule {name}; one of: {known}", name=echo(bad[0]), known=str(known),
            )  # fmt: skip
        return tuple(n for n in known if n in names)
    if set(KNOBS[p.series]) & set(KNOBS[p.knob]):
        raise ScenarioError.keyed(
            "series", "sweep.same_field", "{series} and {knob} set the same scenario field",
            series=p.series, knob=p.knob,
        )  # fmt: skip
    if not text:
        raise ScenarioError.keyed(
            "series_values", "sweep.series_empty", "list the values of {series}, e.g. 1,2,4",
            series=p.series,
        )  # fmt: skip
    lines = _ints(text, "series_values")
    if len(lines) > MAX_LINES:
        raise ScenarioError.keyed(
            "series_values", "sweep.lines_count", "{n} lines; at most {limit}",
            n=len(lines), limit=MAX_LINES,
        )  # fmt: skip
    return lines


def resolve(p: SweepParams) -> Sweep:
    """The sweep's x values and lines, bounded; raises ScenarioError naming the field."""
    values, lines = _x_values(p), _line_keys(p)
    if len(values) * len(lines) > MAX_POINTS:
        field = "values" if p.values else "stop"
        raise ScenarioError.keyed(
            field, "sweep.points", "{n} values x {lines} lines > {limit} points",
            n=len(values), lines=len(lines), limit=MAX_POINTS,
        )  # fmt: skip
    return Sweep(p.knob, values, p.series, lines, "values" if p.values else "stop")


def _v_for(schedule: str, v: int) -> int:
    """A schedule's line keeps the base's chunks per rank where that schedule allows them."""
    if ScheduleName(schedule) in MULTI_CHUNK:
        return max(v, 2)  # the interleaved schedules need >= 2 chunks per rank
    return min(v, 2) if ScheduleName(schedule) in V_SHAPED else 1


def _set(raw: dict[str, Any], knob: str, value: int, global_batch: int) -> None:
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


def _scenario(base: Scenario, sw: Sweep, line: int | str, value: int) -> Scenario:
    raw = base.model_dump()
    # Global batch = dp * micro-batch size * micro-batches, taken from the base scenario.
    global_batch = base.dp * base.micro_batch_size * base.microbatches
    settings = [(sw.knob, value)]
    if sw.series == "schedule":
        raw.update(schedule=line, virtual_stages=_v_for(str(line), base.virtual_stages))
    elif sw.series != "none":
        settings.append((sw.series, int(line)))
    # dp at a fixed global batch goes last: it reads the micro-batch size the other set.
    for knob, v in sorted(settings, key=lambda kv: kv[0] == "dp_fixed_global_batch"):
        _set(raw, knob, v, global_batch)
    return Scenario.model_validate(raw)


def _invalid(x: int, exc: Exception, query: dict[str, str] | None) -> dict[str, Any]:
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


def _metrics(s: Scenario, hardware: Registry) -> dict[str, Any]:
    _, actions, cost = prepare(s, hardware)
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
    built: list[tuple[int | str, int, Scenario | Exception]] = []
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


def _point(x: int, s: Scenario | Exception, hardware: Registry) -> dict[str, Any]:
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
