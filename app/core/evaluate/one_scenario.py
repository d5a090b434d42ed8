"""evaluate(scenario): layout, schedule, simulated timeline and costs, as JSON-ready data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core import schedules
from app.core.cost import predict
from app.core.inputs import parallel_axes, specs
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import (
    MAX_SIMULATED_ACTIONS,
    MAX_WORLD,
    Scenario,
    ScenarioError,
)
from app.core.inputs.teaching import teaching_durations, teaching_f
from app.core.layout.topology import Layout, parse_order
from app.core.schedules import dualpipe, pipeline
from app.core.schedules.units import pair_bounds
from app.core.simulate import DurationsLike, Timeline, simulate
from app.core.views import flow_comm, formula_cards, prediction
from app.core.views.scenario_json import layout_json, schedule_json, tail_json, timeline_json
from app.core.views.step_period import step_period

# The hardware names a scenario may use: the built-in presets unless the server loaded profiles.
Registry = Mapping[str, HardwareSpec]


def _check_world(s: Scenario) -> None:
    if s.world_size > MAX_WORLD:
        raise ScenarioError.keyed(
            "dp", "scenario.world", "world size dp*tp*pp = {dp}*{tp}*{pp} = {world} > {limit}",
            dp=s.dp, tp=s.tp, pp=s.pp, world=s.world_size, limit=MAX_WORLD,
        )  # fmt: skip


def check(s: Scenario) -> None:
    """Cross-field rules, each reported against the field to change."""
    _check_world(s)
    try:
        schedules.validate(s.schedule, s.pp, s.microbatches, s.virtual_stages)
    except schedules.ScheduleError as exc:
        raise ScenarioError(exc.field, exc.reason, exc.key, exc.params) from exc
    given, copies = s.layer_split, s.schedule in schedules.TWO_COPIES
    if given is not None and copies and len(given) != s.pp:
        raise ScenarioError.keyed(
            "stage_layers", "scenario.stage_layers_copies",
            "length vs pp: {n} entries, but {schedule} splits each of its "
            "two copies of the model over pp = {pp} stages, one entry each",
            n=len(given), schedule=s.schedule.value, pp=s.pp,
        )  # fmt: skip
    if given is not None and not copies and len(given) != s.pp * s.chunks:
        raise ScenarioError.keyed(
            "stage_layers", "scenario.stage_layers_length",
            "length vs pp*chunks: {n} entries, but pp*chunks = {pp}*{chunks} = "
            "{vs} virtual stages need one each",
            n=len(given), pp=s.pp, chunks=s.chunks, vs=s.pp * s.chunks,
        )  # fmt: skip
    _check_fb_time(s)
    if s.tp_comm_overlap and not s.sequence_parallel:
        # Megatron-LM arguments.py: "Tensor parallel communication/GEMM overlap can happen
        # only when sequence parallelism is enabled".
        raise ScenarioError.keyed(
            "tp_comm_overlap",
            "scenario.tp_overlap_sp",
            "TP communication overlap needs sequence_parallel=true (Megatron)",
        )
    work = s.pp * s.microbatches * s.chunks * 3
    if work > MAX_SIMULATED_ACTIONS:
        raise ScenarioError.keyed(
            "microbatches", "scenario.too_large",
            "pp*microbatches*chunks = {pp}*{m}*{chunks} is too large to "
            "simulate in one request (limit {limit} chunk-microbatches)",
            pp=s.pp, m=s.microbatches, chunks=s.chunks, limit=MAX_SIMULATED_ACTIONS // 3,
        )  # fmt: skip


def layout_of(s: Scenario, gpus_per_node: int) -> Layout:
    return Layout(
        dp=s.dp, tp=s.tp, pp=s.pp, order=parse_order(s.order), gpus_per_node=gpus_per_node,
        cp=s.cp, ep=s.ep, etp=s.etp,
    )  # fmt: skip


def _check_fb_time(s: Scenario) -> None:
    """fb_time, in teaching units, between the pair's longer part and its parts' sum."""
    if s.fb_time is None:
        return
    if s.f_time is None:
        raise ScenarioError.keyed(
            "fb_time",
            "scenario.fb_needs_f",
            "fb_time is in teaching units: give f_time (and b_time)",
        )
    lo, hi = pair_bounds(teaching_durations(s))
    if not lo <= s.fb_time <= hi:
        raise ScenarioError.keyed(
            "fb_time", "scenario.fb_range",
            "out of range: an overlapped F&B pair lasts from max(F, B+W) = {lo} (overlap "
            "hides communication, not compute) to F+B+W = {hi} (no gain), got {got}",
            lo=f"{lo:g}", hi=f"{hi:g}", got=f"{s.fb_time:g}",
        )  # fmt: skip


def prepare(
    s: Scenario, hardware: Registry = HARDWARE, cache: dict | None = None, what_ifs: bool = True
) -> tuple[Layout, list[list[schedules.Action]], prediction.Prediction]:
    """Validate, then lay out, schedule and cost one scenario (no JSON of the layout).
    ``cache``: a dict owned by one caller pricing many scenarios (one plan), in which what
    depends on the pipeline's shape alone (the actions, the split-backward frontier) is kept
    by that shape; its readers never change them. ``what_ifs``: False for a caller that
    reads no advice (cost.predict.price: its memory what-ifs are left out)."""
    layout, actions, cost, _ = _staged(s, hardware, None, cache, what_ifs)
    return layout, actions, cost


def _built(s: Scenario, cache: dict | None) -> list[list[schedules.Action]]:
    """schedules.build, once per (schedule, pp, microbatches, v) in ``cache``."""
    key = ("actions", s.schedule, s.pp, s.microbatches, s.virtual_stages)
    if cache is None:
        return schedules.build(*key[1:])
    if key not in cache:
        two = s.schedule in schedules.TWO_COPIES
        cache[key] = _dualpipe(s, cache) if two else schedules.build(*key[1:])
    return cache[key]


def _dualpipe(s: Scenario, cache: dict) -> list[list[schedules.Action]]:
    """DualPipe's actions, and its unit plans put in ``cache`` for cost.predict, from one
    dualpipe.plan per rank: schedules.build and schedules.units.unit_plan would each run it
    (the same order: build's is plan().ops, and unit_plan checks its row against them)."""
    schedules.validate(s.schedule, s.pp, s.microbatches, s.virtual_stages)  # as build does
    plans = [dualpipe.plan(r, s.pp, s.microbatches) for r in range(s.pp)]
    cache[predict.units_key(s)] = [(p.release, p.waits, p.pairs) for p in plans]
    return [[schedules.Action._make(op) for op in p.ops] for p in plans]


def _staged(
    s: Scenario,
    hardware: Registry,
    teaching: DurationsLike | None,
    cache: dict | None = None,
    what_ifs: bool = True,
) -> tuple[Layout, list[list[schedules.Action]], prediction.Prediction, Timeline | None]:
    """One scenario through the stages, each entered once and in order: layout, schedules
    (the checks on the order, the actions, the placement), simulate (the teaching-unit
    timeline, when asked), cost (which simulates its own durations), views. Model, hardware
    and training specs are values from app.core.inputs, read where needed."""
    model = specs.model_of(s)
    specs.check_expert_axes(s, model)
    parallel_axes.check_axes(s)  # before the 3D world check: its world counts cp
    _check_world(s)
    hw = specs.hardware_of(s, hardware)
    layout = layout_of(s, hw.gpus_per_node)
    check(s)
    specs.check_model(s, model)
    parallel_axes.check_sequence(s, model.seq_len)
    parallel_axes.check_ulysses(s, model.heads, model.kv_heads or model.heads)
    pipe = pipeline.plan(s.schedule, s.pp, s.virtual_stages, model.layers, s.layer_split)
    actions = _built(s, cache)
    shown = None if teaching is None else simulate(s.schedule, actions, teaching, s.virtual_stages)
    training = specs.training_of(s)
    costed = predict.price(s, model, hw, training, layout, pipe, actions, cache, what_ifs)
    return layout, actions, prediction.sections(s, model, hw, layout, pipe, costed), shown


def evaluate(s: Scenario, hardware: Registry = HARDWARE, *, lean: bool = False) -> dict[str, Any]:
    """Everything a view needs for one scenario. Raises ScenarioError on bad combinations.
    ``lean``: without the formula cards and the per-rank action lists, which the comparison
    never draws (at pp=16 x 256 micro-batches they were a third of its time)."""
    teaching = teaching_durations(s)
    layout, actions, cost, taught = _staged(s, hardware, teaching)
    if taught is None:
        shown, scale = cost.timeline, 1.0
    else:
        shown = taught
        # Tail and TP pulses drawn in teaching units, in proportion to the cost model's F.
        scale = teaching_f(teaching, s.pp, s.chunks) / cost.teaching_ref_f
    timeline = timeline_json(
        shown,
        "abstract" if teaching else "s",
        tail_json(
            shown.makespan,
            s.pp,
            cost.dp_s * scale,
            cost.optim_s * scale,
            cost.sections["breakdown"]["dp_hidden_s"] * scale,
        ),  # fmt: skip
    )
    timeline["tp_time"] = cost.tp_pass_s * scale
    # The CP ring and EP all-to-alls inside each F and B (only when cp or ep > 1).
    hw = specs.hardware_of(s, hardware)
    lc = flow_comm.layer_comm(cost.model, hw, cost.training, layout, s.routing_imbalance, scale)
    if lc is not None:
        timeline["layer_comm"] = lc
    # ZB-H2's step is the steady state of back-to-back steps (views/step_period.py).
    durations = cost.chunk_durations if teaching is None else teaching
    unit = "s" if teaching is None else "u"
    timeline["step_period"] = step_period(
        s.schedule, actions, shown, durations, s.virtual_stages, unit
    )
    return {
        "scenario": s.model_dump(mode="json"),
        "query": s.query(),
        "layout": layout_json(layout),
        "schedule": schedule_json(s, None if lean else actions),
        "timeline": timeline,
        **cost.sections,
        "formulas": None if lean else formula_cards.cards(s, cost, shown, actions, teaching),
    }
