"""The cost stage's one entry: every number the cost model gives one scenario, in one pass.
It prices each chunk's actions (durations), runs the simulator on them, then charges memory,
bytes, the step's tail and FLOPs. views.prediction turns the result into the page's sections
and the advice; nothing here is JSON."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from app.core.cost import comm, durations, expert_tail, flops, memory, shapes, step
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules import RELEASE_BY_UNIT, SPLIT_BACKWARD, Action
from app.core.schedules.pipeline import Pipeline
from app.core.schedules.units import unit_plan
from app.core.simulate import Durations, Timeline, peak_held, simulate

T = TypeVar("T")


@dataclass(frozen=True)
class WhatIf:
    """The peak-memory GPU under another setting, from the same cost model."""

    peak_bytes: float
    activations_bytes: float
    tp_bytes: float = 0.0  # TP bytes per step per rank
    flops_ratio: float = 1.0  # hardware FLOPs per step over the current setting's
    gemm_rate: float = 1.0  # tensor-core GEMM rate over the current setting's (TF32 -> bf16)


@dataclass(frozen=True)
class Costed:
    """One scenario, priced. Seconds per step unless named otherwise."""

    training: Training
    timeline: Timeline  # simulated with the cost model's durations, in seconds
    chunk_durations: list[list[Durations]]  # [rank][chunk]
    rank_durations: list[Durations]  # per rank: the mean of its chunks (same totals)
    tp_pass_s: float  # TP collective seconds inside one chunk's F (and again in its B)
    stages: list[memory.StageMemory]
    comm_bytes: dict[str, float]
    links: dict[str, str]  # each axis: "intra" (one NVLink domain) or "inter" (NICs)
    tail: step.Tail
    step_s: float
    tp_step_s: float
    batch: int  # sequences per step (global batch)
    model_flops: float
    hardware_flops: float
    recomputed: float | None  # recomputed_layers(); None: the mode's own rule
    # Rank 0's mean chunk forward without the embedding: what teaching units are scaled by,
    # so a teaching scenario's drawn tail does not move with the embedding's cost.
    teaching_ref_f: float
    # The advice's what-ifs; None for a forward-only step (nothing to recompute) or where the
    # caller reads no advice (price's what_ifs=False: the planner's rows never show it).
    full_recompute: WhatIf | None
    bf16: WhatIf | None


def links_of(layout: Layout, hw: HardwareSpec) -> dict[str, str]:
    """Each axis' link: "intra" inside one NVLink domain, "inter" over the NICs."""
    return {
        a: "inter" if comm.placement(layout, a, hw.domain_size).domains > 1 else "intra"
        for a in ("tp", "pp", "dp")
    }


def recomputed_layers(m: ModelSpec, t: Training, layers: tuple | list | None) -> float | None:
    """Layers of the model the backward runs forward again: t.recomputed's share of every
    chunk's layers (DualPipe's two copies each carry half the micro-batches); None: every
    layer (or, without full recompute, the mode's own rule in flops.hardware_flops)."""
    if t.recompute != "full" or t.recompute_layers is None or layers is None:
        return None
    held = sum(n for row in layers for n in row)
    return m.layers * sum(t.recomputed(n) for row in layers for n in row) / max(held, 1)


def what_if(
    m: ModelSpec,
    t: Training,
    layout: Layout,
    memory_args: tuple,
    hw: HardwareSpec | None = None,
    known: tuple[list[memory.StageMemory], float] | None = None,
    **change,
) -> WhatIf:
    """The peak-memory GPU and its TP bytes with ``change`` applied to the training (the
    advice's numbers for recompute and mixed precision); memory_args = stage_memory's rest,
    ``hw`` the hardware whose memory floor the peak carries; ``known``: the stages and TP
    bytes of ``t`` itself, reused when ``change`` leaves it as it is (bf16 on a bf16 step)."""
    t2 = replace(t, **change)
    chunks, layers = memory_args[1], memory_args[4]
    if known is not None and t2 == t:
        stages, tp_b = known
    else:
        stages = memory.stage_memory(m, t2, *memory_args, hw=hw)
        rank_params = max(st.params for st in stages)
        tp_b = comm.step_comm_bytes(m, t2, layout, chunks, rank_params, layers)["tp_bytes"]
    top = max(stages, key=lambda st: st.total_bytes)
    again = recomputed_layers(m, t, layers), recomputed_layers(m, t2, layers)
    ratio = flops.hardware_flops(m, 1, t2.recompute, again[1]) / flops.hardware_flops(
        m, 1, t.recompute, again[0]
    )
    return WhatIf(top.total_bytes, top.activations_bytes, tp_b, ratio)


def _by_order(
    kind: str, s: Scenario, layers: list[list[int]], cache: dict | None, make: Callable[[], T]
) -> T:
    """``make()``, once per (kind, schedule, pp, microbatches, v, layers) in ``cache``: for
    what reads each rank's actions in their order and the layers, never the durations
    (memory.held_frontier, simulate.peak_held: each stage's own events, in its order)."""
    if cache is None:
        return make()
    key = (kind, s.schedule, s.pp, s.microbatches, s.virtual_stages, tuple(map(tuple, layers)))
    if key not in cache:
        cache[key] = make()
    return cache[key]


def units_key(s: Scenario) -> tuple:
    """The key of the pipeline shape's unit plans in a caller's cache (_unit_plans), which a
    caller building DualPipe's actions from its plans fills first (one_scenario._built)."""
    return ("units", s.schedule, s.pp, s.microbatches, s.virtual_stages)


def _unit_plans(s: Scenario, actions: list[list[Action]], cache: dict | None) -> list | None:
    """Each rank's schedules.units.unit_plan, once per (schedule, pp, microbatches, v) in
    ``cache`` (it reads the actions alone); None without one (simulate finds them)."""
    if cache is None:
        return None
    key = units_key(s)
    if key not in cache:
        cache[key] = [unit_plan(s.schedule, row, r, s.pp) for r, row in enumerate(actions)]
    return cache[key]


def _timeline(
    s: Scenario, actions: list[list[Action]], chunk_d: list, plans: list | None, cache: dict | None
) -> Timeline:
    """simulate, once per (schedule, pp, microbatches, v, durations) in ``cache``: the
    planner's shortlist holds candidates that differ only in what the pipeline never sees
    (ZeRO stage, gradient overlap, HSDP groups...), which simulate alike. The Timeline is
    frozen and its readers never change it, so the candidates share it (and its events)."""
    if cache is None:
        return simulate(s.schedule, actions, chunk_d, s.virtual_stages, plans)
    key = ("timeline", s.schedule, s.pp, s.microbatches, s.virtual_stages,
           tuple(map(tuple, chunk_d)))  # fmt: skip
    if key not in cache:
        cache[key] = simulate(s.schedule, actions, chunk_d, s.virtual_stages, plans, cache)
    return cache[key]


def price(
    s: Scenario,
    m: ModelSpec,
    hw: HardwareSpec,
    t: Training,
    layout: Layout,
    pipe: Pipeline,
    actions: list[list[Action]],
    cache: dict | None = None,
    what_ifs: bool = True,
) -> Costed:
    """``cache``: one caller's dict (one plan's, evaluate.one_scenario.prepare) keeping what
    the pipeline's shape alone decides (_by_order, _unit_plans, _timeline); ``what_ifs``:
    False leaves out the advice's full_recompute and bf16 what-ifs (None), each one more
    memory pricing, for a caller that shows no advice (the planner)."""
    layers, ends, head = pipe.layers, pipe.ends, pipe.head_rank
    # Ranks hold and compute the padded vocabulary; the model's FLOPs (MFU) count its own.
    m, given = shapes.as_held(m, s.tp, t.vocab_multiple, s.ep, s.routing_imbalance), m
    pairs = s.schedule in RELEASE_BY_UNIT  # DualPipe(V)'s overlapped F&B pairs
    chunk_d, tp_pass = durations.chunk_durations(
        m, hw, t, layout, s.chunks, head, layers, ends, pairs
    )
    plans = _unit_plans(s, actions, cache) if s.schedule in RELEASE_BY_UNIT else None
    timeline = _timeline(s, actions, chunk_d, plans, cache)
    # Unequal chunks on a rank: which are in flight at the peak matters (one more pass).
    uneven = any(len(set(row)) > 1 for row in layers)
    held = None
    if uneven:
        held = _by_order(
            "held", s, layers, cache, lambda: peak_held(s.schedule, timeline.events, layers)
        )
    par = (s.dp, s.tp, s.pp)
    # Split backward: B's keep what their W's need until the W (Qi et al. 2024 Table 1 M_W).
    split = s.schedule in SPLIT_BACKWARD
    frontier = None
    if split:
        make = lambda: memory.held_frontier(timeline.events, layers)  # noqa: E731
        frontier = _by_order("frontier", s, layers, cache, make)
    memory_args = (par, s.chunks, head, timeline.peak_inflight, layers, held, ends, frontier)
    stages = memory.stage_memory(m, t, *memory_args, hw=hw)
    rank_params = max(st.params for st in stages)
    first = sum(layers[0])
    tensors = max(
        shapes.param_tensors(m, sum(row), any(e[0] for e in end), any(e[1] for e in end))
        for row, end in zip(layers, ends, strict=True)
    )
    gathers = durations.zero3_messages(m, t, first)
    ex = expert_tail.share(m, layout, [st.params for st in stages], layers)
    tail = step.tail(rank_params, t, layout, hw, chunk_d, s.chunks, first, gathers, tensors, ex)
    rank_d = [Durations.mean(row) for row in chunk_d]
    batch = s.micro_batch_size * s.microbatches * s.dp
    again = recomputed_layers(m, t, layers)
    model_f = flops.model_flops(given, batch)
    hw_f = flops.hardware_flops(given, batch, t.recompute, again)
    if t.forward_only:  # model_flops is 3x the forward (backward = 2x forward): keep the forward
        model_f = hw_f = model_f / 3.0
    # Passes per layer on the busiest rank: t.passes, fewer where recompute_layers spares some.
    passes = max(sum(n * t.chunk_passes(n) for n in row) for row in layers) / max(
        max(sum(row) for row in layers), 1
    )
    dense = expert_tail.dense_params(rank_params, ex)  # the experts' bytes go over edp
    comm_bytes = comm.step_comm_bytes(m, t, layout, s.chunks, dense, layers)
    comm_bytes["dp_bytes"] += expert_tail.sent_bytes(ex, t)
    bf16 = full = None
    if what_ifs:
        known = (stages, comm_bytes["tp_bytes"])
        bf16 = what_if(m, t, layout, memory_args, hw, known, dtype="bf16")
        bf16 = replace(bf16, gemm_rate=hw.matmul_tflops(2) / hw.matmul_tflops(t.element_bytes))
    if what_ifs and not t.forward_only:
        change = {"recompute": "full", "recompute_layers": None, "selective_ac": "attention"}
        full = what_if(m, t, layout, memory_args, hw, **change)
    return Costed(
        training=t,
        timeline=timeline,
        chunk_durations=chunk_d,
        rank_durations=rank_d,
        tp_pass_s=tp_pass,
        stages=stages,
        comm_bytes=comm_bytes,
        links=links_of(layout, hw),
        tail=tail,
        step_s=timeline.makespan + tail.dp_s + tail.optim_s,
        tp_step_s=tp_pass * passes * s.microbatches * s.chunks,
        batch=batch,
        model_flops=model_f,
        hardware_flops=hw_f,
        recomputed=again,
        teaching_ref_f=rank_d[0].f - durations.embedding_seconds(m, hw, t, layout)[0] / s.chunks,
        full_recompute=full,
        bf16=bf16,
    )
