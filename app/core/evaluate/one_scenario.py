"""evaluate(scenario): layout, schedule, simulated timeline and costs, as JSON-ready data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core import schedules
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import (
    MAX_SIMULATED_ACTIONS,
    MAX_WORLD,
    Scenario,
    ScenarioError,
    teaching_durations,
    teaching_f,
)
from app.core.layout.topology import AXES, Layout, parse_order
from app.core.simulate import Timeline, simulate
from app.core.simulate.units import pair_bounds
from app.core.views import formula_cards, prediction

# The hardware names a scenario may use: the built-in presets unless the server loaded profiles.
Registry = Mapping[str, HardwareSpec]


def check(s: Scenario) -> None:
    """Cross-field rules, each reported against the field to change."""
    if s.world_size > MAX_WORLD:
        raise ScenarioError(
            "dp", f"world size dp*tp*pp = {s.dp}*{s.tp}*{s.pp} = {s.world_size} > {MAX_WORLD}"
        )
    try:
        schedules.validate(s.schedule, s.pp, s.microbatches, s.virtual_stages)
    except schedules.ScheduleError as exc:
        raise ScenarioError(exc.field, exc.reason) from exc
    given, copies = s.layer_split, s.schedule in schedules.TWO_COPIES
    if given is not None and copies and len(given) != s.pp:
        raise ScenarioError(
            "stage_layers",
            f"length vs pp: {len(given)} entries, but {s.schedule.value} splits each of its "
            f"two copies of the model over pp = {s.pp} stages, one entry each",
        )
    if given is not None and not copies and len(given) != s.pp * s.chunks:
        raise ScenarioError(
            "stage_layers",
            f"length vs pp*chunks: {len(given)} entries, but pp*chunks = {s.pp}*{s.chunks} = "
            f"{s.pp * s.chunks} virtual stages need one each",
        )
    _check_fb_time(s)
    if s.tp_comm_overlap and not s.sequence_parallel:
        # Megatron-LM arguments.py: "Tensor parallel communication/GEMM overlap can happen
        # only when sequence parallelism is enabled".
        raise ScenarioError(
            "tp_comm_overlap", "TP communication overlap needs sequence_parallel=true (Megatron)"
        )
    work = s.pp * s.microbatches * s.chunks * 3
    if work > MAX_SIMULATED_ACTIONS:
        raise ScenarioError(
            "microbatches",
            f"pp*microbatches*chunks = {s.pp}*{s.microbatches}*{s.chunks} is too large to "
            f"simulate in one request (limit {MAX_SIMULATED_ACTIONS // 3} chunk-microbatches)",
        )


def layout_of(s: Scenario, gpus_per_node: int) -> Layout:
    return Layout(
        dp=s.dp, tp=s.tp, pp=s.pp, order=parse_order(s.order), gpus_per_node=gpus_per_node
    )


def layout_json(layout: Layout) -> dict[str, Any]:
    st, world, gpn = layout.strides, layout.world_size, layout.gpus_per_node
    ranks = [
        {
            "rank": r,
            "dp": (r // st["dp"]) % layout.dp,
            "pp": (r // st["pp"]) % layout.pp,
            "tp": (r // st["tp"]) % layout.tp,
            "node": r // gpn,
        }
        for r in range(world)
    ]
    return {
        "world_size": world,
        "order": "-".join(layout.order),
        "gpus_per_node": gpn,
        "nodes": (world + gpn - 1) // gpn,
        "sizes": {a: layout.size(a) for a in AXES},
        "ranks": ranks,
        "groups": {a: layout.groups(a) for a in ("tp", "pp", "dp")},
        "crosses_node": {a: layout.crosses_node(a) for a in ("tp", "pp", "dp")},
    }


def schedule_json(s: Scenario, actions: list[list[schedules.Action]]) -> dict[str, Any]:
    return {
        "name": s.schedule.value,
        "microbatches": s.microbatches,
        "virtual_stages": s.chunks,
        "split_backward": s.schedule in schedules.SPLIT_BACKWARD,
        "forward_only": s.schedule in schedules.FORWARD_ONLY,
        "actions": schedules.compact(actions, show_chunk=s.chunks > 1),
    }


def timeline_json(t: Timeline, units: str, tail: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "units": units,
        "events": [
            {
                "stage": e.stage,
                "kind": e.kind,
                "microbatch": e.microbatch,
                "chunk": e.chunk,
                "start": e.start,
                "end": e.end,
            }
            for e in t.events
        ],
        "tail": tail,
        "makespan": t.makespan,
        "bubble_fraction": t.bubble_fraction,
        "bubble_over_ideal": t.bubble_over_ideal,
        "peak_inflight": t.peak_inflight,
        "busy": t.busy,
    }


def _check_fb_time(s: Scenario) -> None:
    """fb_time, in teaching units, between the pair's longer part and its parts' sum."""
    if s.fb_time is None:
        return
    if s.f_time is None:
        raise ScenarioError("fb_time", "fb_time is in teaching units: give f_time (and b_time)")
    lo, hi = pair_bounds(teaching_durations(s))
    if not lo <= s.fb_time <= hi:
        raise ScenarioError(
            "fb_time",
            f"out of range: an overlapped F&B pair lasts from max(F, B+W) = {lo:g} (overlap "
            f"hides communication, not compute) to F+B+W = {hi:g} (no gain), got {s.fb_time:g}",
        )


def _tail(
    makespan: float, stages: int, dp_s: float, optim_s: float, hidden_s: float = 0.0
) -> list[dict[str, Any]]:
    """The step's tail on every stage: the DP gradient all-reduce, then the optimizer. With
    overlap_grad_reduce, the share of the all-reduce the backward hides is drawn as
    ``dp_hidden``, ending where the pipeline drains: under the last backward of stage 0,
    the window cost.overlap.exposed_grad_sync_s gives it; only ``dp`` is time added."""
    tail = []
    for stage in range(stages):
        if hidden_s > 0:
            tail.append({"stage": stage, "kind": "dp_hidden", "microbatch": None, "chunk": None,
                         "start": max(0.0, makespan - hidden_s), "end": makespan})  # fmt: skip
        t = makespan
        for kind, seconds in (("dp", dp_s), ("optim", optim_s)):
            if seconds > 0:
                tail.append({"stage": stage, "kind": kind, "microbatch": None, "chunk": None,
                             "start": t, "end": t + seconds})  # fmt: skip
                t += seconds
    return tail


def prepare(
    s: Scenario, hardware: Registry = HARDWARE
) -> tuple[Layout, list[list[schedules.Action]], prediction.Prediction]:
    """Validate, then lay out, schedule and cost one scenario (no JSON of the layout)."""
    check(s)
    model, hw = specs.model_of(s), specs.hardware_of(s, hardware)
    specs.check_model(s, model)
    layout = layout_of(s, hw.gpus_per_node)
    actions = schedules.build(s.schedule, s.pp, s.microbatches, s.virtual_stages)
    return layout, actions, prediction.predict(s, model, hw, layout, actions)


def evaluate(s: Scenario, hardware: Registry = HARDWARE) -> dict[str, Any]:
    """Everything a view needs for one scenario. Raises ScenarioError on bad combinations."""
    layout, actions, cost = prepare(s, hardware)
    teaching = teaching_durations(s)
    if teaching is None:
        shown, scale = cost.timeline, 1.0
    else:
        shown = simulate(s.schedule, actions, teaching, s.virtual_stages)
        # Tail and TP pulses drawn in teaching units, in proportion to the cost model's F.
        scale = teaching_f(teaching, s.pp, s.chunks) / cost.teaching_ref_f
    timeline = timeline_json(
        shown,
        "abstract" if teaching else "s",
        _tail(
            shown.makespan,
            s.pp,
            cost.dp_s * scale,
            cost.optim_s * scale,
            cost.sections["breakdown"]["dp_hidden_s"] * scale,
        ),  # fmt: skip
    )
    timeline["tp_time"] = cost.tp_pass_s * scale
    return {
        "scenario": s.model_dump(mode="json"),
        "query": s.query(),
        "layout": layout_json(layout),
        "schedule": schedule_json(s, actions),
        "timeline": timeline,
        **cost.sections,
        "formulas": formula_cards.cards(s, cost, shown, actions, teaching),
    }
