"""A sweep's parameters, validated: the knob, its values (a range or a list), the second
knob or the schedules that make the lines, and their bounds. ``resolve`` turns them into the
Sweep that app.core.evaluate.sweep runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from app.core.inputs.scenario import ScenarioError
from app.core.inputs.training import Fp8Recipe
from app.core.schedules import FORWARD_ONLY, ScheduleName
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
    "cp": ("cp",),
    "ep": ("ep",),
    "routing_imbalance": ("routing_imbalance",),
    "dp_shard": ("dp_shard",),
}
# Knobs whose values may be fractions (the busiest expert's share of tokens, over the mean).
DECIMAL_KNOBS = frozenset({"routing_imbalance"})
Knob = Literal[
    "microbatches", "pp", "tp", "dp_fixed_global_batch", "dp_fixed_microbatch",
    "virtual_stages", "micro_batch_size", "seq_len", "cp", "ep", "routing_imbalance",
    "dp_shard",
]  # fmt: skip
SeriesKind = Literal[
    "none", "schedule", "fp8", "microbatches", "pp", "tp", "dp_fixed_global_batch",
    "dp_fixed_microbatch", "virtual_stages", "micro_batch_size", "seq_len", "cp", "ep",
    "routing_imbalance", "dp_shard",
]  # fmt: skip
# The FP8 line's recipes by default: MXFP8 needs Blackwell, and a sweep on other hardware
# would show it refused at every point (the lines may still name it).
FP8_LINES = ("none", "tensorwise", "blockwise")
FP8_RECIPES: tuple[str, ...] = get_args(Fp8Recipe)
MAX_VALUES = 64  # points on one line
MAX_LINES = 8  # one per schedule (7) fits
MAX_POINTS = 256  # values x lines
MAX_VALUE = 1 << 20
# Simulated chunk-microbatch slots (pp*m*chunks, summed over points): ~7.5 us each, so one
# sweep stays near half a second (a teaching-unit scenario is simulated twice).
MAX_SLOTS = 1 << 16
METRICS = ("bubble_fraction", "bubble_over_ideal", "peak_bytes", "capacity_bytes",
           "step_time_s", "tokens_per_s", "tp_share", "pp_share", "dp_share", "mfu")  # fmt: skip
# Only on points with cp or ep > 1: the exposed CP ring's and EP all-to-alls' share of the step.
AXIS_METRICS = ("cp_share", "ep_share")


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
    values: tuple[int | float, ...]
    series: str
    lines: tuple[int | float | str, ...]  # schedule names, the second knob's values, or ("",)
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


def _decimal(part: str) -> float | None:
    """A plain decimal such as 1.25 (no sign, exponent, inf or nan), else None."""
    whole, _, frac = part.partition(".")
    digits = whole + frac
    return float(part) if part.isascii() and digits.isdigit() and whole else None


def _numbers(text: str, field: str, decimal: bool) -> tuple[int | float, ...]:
    """Whole numbers, or for a DECIMAL_KNOBS knob plain decimals too (1, 1.25, 2)."""
    if not decimal:
        return _ints(text, field)
    out: set[int | float] = set()
    for part in (p.strip() for p in text.split(",")):
        value = _decimal(part)
        if value is None or not 1 <= value <= MAX_VALUE:
            raise ScenarioError.keyed(
                field, "sweep.not_number", "{value} is not a number from 1 to {limit}",
                value=echo(part), limit=MAX_VALUE,
            )  # fmt: skip
        out.add(int(value) if value.is_integer() else value)
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


def _x_values(p: SweepParams) -> tuple[int | float, ...]:
    if not p.values or not p.values.strip():
        return _range(p)
    values = _numbers(p.values, "values", p.knob in DECIMAL_KNOBS)
    if len(values) > MAX_VALUES:
        raise ScenarioError.keyed(
            "values", "sweep.values_count", "{n} values; at most {limit}",
            n=len(values), limit=MAX_VALUES,
        )  # fmt: skip
    return values


def _line_keys(p: SweepParams) -> tuple[int | float | str, ...]:
    text = (p.series_values or "").strip()
    if p.series == "none":
        return ("",)
    if p.series == "fp8":
        return _recipes(text)
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
    lines = _numbers(text, "series_values", p.series in DECIMAL_KNOBS)
    if len(lines) > MAX_LINES:
        raise ScenarioError.keyed(
            "series_values", "sweep.lines_count", "{n} lines; at most {limit}",
            n=len(lines), limit=MAX_LINES,
        )  # fmt: skip
    return lines


def _recipes(text: str) -> tuple[str, ...]:
    """The FP8 lines: the listed recipes in Fp8Recipe's order, else FP8_LINES."""
    names = [n.strip() for n in text.split(",")] if text else list(FP8_LINES)
    bad = [n for n in names if n not in FP8_RECIPES]
    if bad:
        raise ScenarioError.keyed(
            "series_values", "sweep.fp8_unknown", "unknown FP8 recipe {name}; one of: {known}",
            name=echo(bad[0]), known=", ".join(FP8_RECIPES),
        )  # fmt: skip
    return tuple(n for n in FP8_RECIPES if n in names)


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
