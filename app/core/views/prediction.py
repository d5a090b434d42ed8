"""The cost model's sections of the view: memory, compute, comm, step time, MFU, advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from app.core.cost import comm, durations, flops, memory, shapes, step
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario
from app.core.inputs.specs import layer_split, rank_layers, training_of
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules import RELEASE_BY_UNIT, SPLIT_BACKWARD, Action, stage_location
from app.core.simulate import Durations, Timeline, peak_held, simulate
from app.core.teach.advice import Breakdown, WhatIf, advise

GIB = 1 << 30


@dataclass(frozen=True)
class Prediction:
    timeline: Timeline  # simulated with the cost model's durations, in seconds
    durations: list[Durations]  # per rank: the mean of its chunks (same totals)
    tp_pass_s: float  # TP collective seconds inside one chunk's F (and again in its B)
    dp_s: float  # the exposed DP tail
    optim_s: float
    sections: dict[str, Any]
    chunk_durations: list[list[Durations]]  # durations[rank][chunk]
    # Rank 0's mean chunk forward without the embedding: what teaching units are scaled by,
    # so a teaching scenario's drawn tail does not move with the embedding's cost.
    teaching_ref_f: float


def balance_json(
    layers: list[list[int]],
    chunk_d: list[list[Durations]],
    head: int,
    split: list[int],
    ends: list[list[tuple[bool, bool]]] | None = None,
) -> dict[str, Any]:
    """Per pipeline rank: its layers per chunk and its F+B(+W) seconds of one micro-batch
    through all its chunks, beside the slowest rank's (1F1B's steady state runs at the
    slowest stage's pace: Narayanan et al. 2021 §2.2)."""
    work = [sum(d.f + d.b + d.w for d in row) for row in chunk_d]
    slowest = max(work)
    per_stage = [
        {
            "stage": r,
            "layers": list(layers[r]),
            "total_layers": sum(layers[r]),
            "fb_s": work[r],
            "of_slowest": work[r] / slowest if slowest > 0 else 1.0,
            # shapes.chunk_ends: DualPipe's end ranks each hold an embedding and a head.
            "embedding": any(e for e, _ in ends[r]) if ends else r == 0,
            "head": any(h for _, h in ends[r]) if ends else r == head,
        }
        for r in range(len(layers))
    ]
    return {
        "split": list(split),
        "per_stage": per_stage,
        "slowest_stage": work.index(slowest),
        # The share of the slowest stage's time the mean stage idles for (0 = balanced).
        "imbalance": 1.0 - sum(work) / (len(work) * slowest) if slowest > 0 else 0.0,
    }


def _memory_json(stages: list[memory.StageMemory], capacity: float) -> dict[str, Any]:
    # JSON has no tuples: list the layers so the view equals its own JSON round trip.
    per_stage = [
        {**asdict(st), "layers": list(st.layers), "total_bytes": st.total_bytes} for st in stages
    ]
    peak = max(st.total_bytes for st in stages)
    return {
        "per_stage": per_stage,
        "capacity_bytes": capacity,
        "peak_bytes": peak,
        "fits": peak <= capacity,
    }


def links_of(layout: Layout, hw: HardwareSpec) -> dict[str, str]:
    """Each axis' link: "intra" inside one NVLink domain, "inter" over the NICs."""
    return {
        a: "inter" if comm.placement(layout, a, hw.domain_size).domains > 1 else "intra"
        for a in ("tp", "pp", "dp")
    }


def recomputed_layers(m: ModelSpec, t: Training, layers: list[list[int]] | None) -> float | None:
    """Layers of the model the backward runs forward again: t.recomputed's share of every
    chunk's layers (DualPipe's two copies each carry half the micro-batches); None: every
    layer (or, without full recompute, the mode's own rule in flops.hardware_flops)."""
    if t.recompute != "full" or t.recompute_layers is None or layers is None:
        return None
    held = sum(n for row in layers for n in row)
    return m.layers * sum(t.recomputed(n) for row in layers for n in row) / max(held, 1)


def what_if(m: ModelSpec, t: Training, layout: Layout, memory_args: tuple, **change) -> WhatIf:
    """The peak-memory GPU and its TP bytes with ``change`` applied to the training (the
    advice's numbers for recompute and mixed precision); memory_args = stage_memory's rest."""
    t2 = replace(t, **change)
    stages = memory.stage_memory(m, t2, *memory_args)
    top = max(stages, key=lambda st: st.total_bytes)
    chunks, layers = memory_args[1], memory_args[4]
    rank_params = max(st.params for st in stages)
    tp_b = comm.step_comm_bytes(m, t2, layout, chunks, rank_params, layers)["tp_bytes"]
    again = recomputed_layers(m, t, layers), recomputed_layers(m, t2, layers)
    ratio = flops.hardware_flops(m, 1, t2.recompute, again[1]) / flops.hardware_flops(
        m, 1, t.recompute, again[0]
    )
    return WhatIf(top.total_bytes, top.activations_bytes, tp_b, ratio)


def predict(
    s: Scenario, m: ModelSpec, hw: HardwareSpec, layout: Layout, actions: list[list[Action]]
) -> Prediction:
    t = training_of(s)
    head = stage_location(s.schedule, s.pp * s.chunks - 1, s.pp)[0]
    layers = rank_layers(s, m)
    ends = shapes.chunk_ends(s.schedule, s.pp, s.chunks)  # DualPipe: both end ranks hold both
    pairs = s.schedule in RELEASE_BY_UNIT  # DualPipe(V)'s overlapped F&B pairs
    chunk_d, tp_pass = durations.chunk_durations(
        m, hw, t, layout, s.chunks, head, layers, ends, pairs
    )
    timeline = simulate(s.schedule, actions, chunk_d, s.virtual_stages)
    # Unequal chunks on a rank: which are in flight at the peak matters (one more pass).
    uneven = any(len(set(row)) > 1 for row in layers)
    held = peak_held(s.schedule, timeline.events, layers) if uneven else None
    par = (s.dp, s.tp, s.pp)
    # Split backward: B's keep what their W's need until the W (Qi et al. 2024 Table 1 M_W).
    split = s.schedule in SPLIT_BACKWARD
    frontier = memory.held_frontier(timeline.events, layers) if split else None
    memory_args = (par, s.chunks, head, timeline.peak_inflight, layers, held, ends, frontier)
    stages = memory.stage_memory(m, t, *memory_args)
    top = max(stages, key=lambda st: st.total_bytes)
    rank_params = max(st.params for st in stages)
    comm_b = comm.step_comm_bytes(m, t, layout, s.chunks, rank_params, layers)
    first = sum(layers[0])
    gathers = durations.zero3_messages(m, t, first)
    tensors = max(
        shapes.param_tensors(m, sum(row), any(e[0] for e in end), any(e[1] for e in end))
        for row, end in zip(layers, ends, strict=True)
    )
    tail = step.tail(rank_params, t, layout, hw, chunk_d, s.chunks, first, gathers, tensors)
    rank_d = [Durations.mean(row) for row in chunk_d]
    ref_f = rank_d[0].f - durations.embedding_seconds(m, hw, t, layout)[0] / s.chunks
    step_s = timeline.makespan + tail.dp_s + tail.optim_s
    batch = s.micro_batch_size * s.microbatches * s.dp
    again = recomputed_layers(m, t, layers)
    model_f = flops.model_flops(m, batch)
    hw_f = flops.hardware_flops(m, batch, t.recompute, again)
    if t.forward_only:  # model_flops is 3x the forward (backward = 2x forward): keep the forward
        model_f = hw_f = model_f / 3.0
    capacity = hw.hbm_gib * GIB
    memory_j = _memory_json(stages, capacity)
    # Passes per layer on the busiest rank: t.passes, fewer where recompute_layers spares some.
    passes = max(sum(n * t.chunk_passes(n) for n in row) for row in layers) / max(
        max(sum(row) for row in layers), 1
    )
    tp_step_s = tp_pass * passes * s.microbatches * s.chunks
    links = links_of(layout, hw)
    breakdown = Breakdown(
        step_s=step_s,
        tp_s=tp_step_s,
        dp_s=tail.dp_s,
        bubble_fraction=timeline.bubble_fraction,
        memory_ratio=memory_j["peak_bytes"] / capacity,
        microbatches=s.microbatches,
        pp=s.pp,
        tp=s.tp,
        schedule=s.schedule.value,
        tp_crosses_node=links["tp"] == "inter",
        dtype=t.dtype,
        recompute=t.recompute,
        peak_bytes=top.total_bytes,
        activations_bytes=top.activations_bytes,
        capacity_bytes=capacity,
        tp_bytes=comm_b["tp_bytes"],
        # A forward-only step keeps no activations for a backward: nothing to recompute.
        full_recompute=None
        if t.forward_only
        else what_if(m, t, layout, memory_args, recompute="full", recompute_layers=None),
        bf16=replace(
            what_if(m, t, layout, memory_args, dtype="bf16"),
            gemm_rate=hw.matmul_tflops(2) / hw.matmul_tflops(t.element_bytes),
        ),
    )
    sections = {
        "model": asdict(m),
        "hardware": asdict(hw),
        "memory": memory_j,
        "compute": {
            "params_total": memory.total_params(m),
            "global_batch": batch,
            "model_flops_per_iteration": model_f,
            "hardware_flops_per_iteration": hw_f,
            # Layers the backward runs forward again, over the whole model (per replica).
            "recomputed_layers": m.layers * (t.passes == 3) if again is None else again,
            "recompute_layers": t.recompute_layers,
        },
        "comm": {**comm_b, "links": links},
        "breakdown": {
            "pipeline_s": timeline.makespan,
            "tp_s": tp_step_s,
            "dp_s": tail.dp_s,
            "dp_total_s": tail.dp_total_s,
            "dp_hidden_s": tail.dp_total_s - tail.dp_s,
            "optimizer_s": tail.optim_s,
            "bubble_s": timeline.bubble_fraction * timeline.makespan,
        },
        "step_time_s": step_s,
        # Chowdhery et al. 2022 (PaLM) App. B: MFU = model FLOPs/s over peak FLOPs/s.
        "mfu": model_f / (step_s * layout.world_size * hw.peak_tflops * 1e12),
        "tokens_per_s": batch * m.seq_len / step_s,
        "advice": [asdict(a) for a in advise(breakdown)],
        "stage_balance": {
            **balance_json(layers, chunk_d, head, layer_split(s, m), ends),
            "given": s.stage_layers is not None,  # stage_layers, else the default split
        },
    }
    return Prediction(timeline, rank_d, tp_pass, tail.dp_s, tail.optim_s, sections, chunk_d, ref_f)
