"""The cost model's sections of the view (memory, compute, comm, step time, MFU, stage
balance) and the article's advice on them, from one scenario's cost.predict.Costed."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.core.cost import memory
from app.core.cost.predict import Costed
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules.pipeline import Pipeline
from app.core.simulate import Durations, Timeline
from app.core.teach.advice import Breakdown, advise
from app.core.views import flow_comm

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
    # What the views explain the numbers with, so none of them derives them again.
    pipeline: Pipeline
    model: ModelSpec
    training: Training


def balance_json(
    layers: list[list[int]] | tuple[tuple[int, ...], ...],
    chunk_d: list[list[Durations]],
    head: int,
    split: list[int] | tuple[int, ...],
    ends: list[list[tuple[bool, bool]]] | tuple | None = None,
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
    """Per stage every component (cost/memory.py: they sum to total_bytes) and PyTorch's two
    figures, allocated and reserved; the peak is the fullest GPU's total (reserved plus the
    per-process floor), which is what must fit."""
    # JSON has no tuples: list the layers so the view equals its own JSON round trip. The
    # fields read one by one, not by asdict, whose deep copy of each number was a third of a
    # plan's shortlist (every field is a number but the layers).
    per_stage = [
        {
            **{f: getattr(st, f) for f in memory.FIELDS},
            "layers": list(st.layers),
            "allocated_bytes": st.allocated_bytes,
            "reserved_bytes": st.reserved_bytes,
            "total_bytes": st.total_bytes,
        }
        for st in stages
    ]
    top = max(stages, key=lambda st: st.total_bytes)
    return {
        "per_stage": per_stage,
        "capacity_bytes": capacity,
        "peak_bytes": top.total_bytes,
        "peak_stage": top.stage,
        # The fullest GPU's torch.cuda max_memory_allocated and max_memory_reserved.
        "allocated_bytes": top.allocated_bytes,
        "reserved_bytes": top.reserved_bytes,
        "floor_bytes": top.floor_bytes,
        "fragmentation": memory.FRAGMENTATION,
        "fits": top.total_bytes <= capacity,
    }


def axis_comm(s: Scenario, m: ModelSpec, hw: HardwareSpec, layout: Layout, t: Training,
              pipe: Pipeline) -> dict[str, Any]:  # fmt: skip
    """Breakdown's CP and EP fields: the busiest rank's exposed ring and all-to-all seconds
    per step (flow_comm, the cost model's own terms) and whether each group crosses a node;
    none without a p2p ring or experts (their advice stays silent)."""
    lc = flow_comm.layer_comm(m, hw, t, layout, s.routing_imbalance, 1.0)
    if lc is None:
        return {}
    layers = [list(r) for r in pipe.layers]
    exposed = flow_comm.step_exposed_s(lc, layers, s.microbatches, s.schedule)
    return {
        field: value
        for key, seconds in exposed.items()
        for field, value in ((f"{key}_s", seconds), (key, lc[key]["size"]),
                             (f"{key}_crosses_node", lc[key]["crosses"]))
    }  # fmt: skip


def breakdown_of(
    s: Scenario, c: Costed, pipe: Pipeline, capacity: float, axes: dict[str, Any] | None = None
) -> Breakdown:
    """The advice's inputs: the step's parts, the peak-memory GPU and the stages' balance;
    ``axes``: axis_comm's CP and EP fields, where the scenario has them."""
    top = max(c.stages, key=lambda st: st.total_bytes)
    t = c.training
    return Breakdown(
        step_s=c.step_s,
        tp_s=c.tp_step_s,
        dp_s=c.tail.dp_s,
        bubble_fraction=c.timeline.bubble_fraction,
        memory_ratio=top.total_bytes / capacity,
        microbatches=s.microbatches,
        pp=s.pp,
        tp=s.tp,
        schedule=s.schedule.value,
        tp_crosses_node=c.links["tp"] == "inter",
        dtype=t.dtype,
        recompute=t.recompute,
        peak_bytes=top.total_bytes,
        activations_bytes=top.activations_bytes,
        capacity_bytes=capacity,
        tp_bytes=c.comm_bytes["tp_bytes"],
        full_recompute=c.full_recompute,
        bf16=c.bf16,
        stage_work=tuple(sum(d.f + d.b + d.w for d in row) for row in c.chunk_durations),
        stage_layers=tuple(sum(row) for row in pipe.layers),
        stage_ends=tuple((any(e for e, _ in r), any(h for _, h in r)) for r in pipe.ends),
        chunks=pipe.chunks,
        **(axes or {}),
    )


def sections(
    s: Scenario, m: ModelSpec, hw: HardwareSpec, layout: Layout, pipe: Pipeline, c: Costed
) -> Prediction:
    """The page's sections of one priced scenario, with the advice on them."""
    t, tail, timeline = c.training, c.tail, c.timeline
    capacity = hw.hbm_gib * GIB
    advised = breakdown_of(s, c, pipe, capacity, axis_comm(s, m, hw, layout, t, pipe))
    out = {
        "model": asdict(m),
        "hardware": asdict(hw),
        "memory": _memory_json(c.stages, capacity),
        "compute": {
            "params_total": memory.total_params(m),
            "global_batch": c.batch,
            "model_flops_per_iteration": c.model_flops,
            "hardware_flops_per_iteration": c.hardware_flops,
            # The FP8 recipe; MFU below stays against the bf16 peak, as torchtitan's does with
            # float8 on (tools/utils.py get_peak_flops: "hardcoded BF16 type peak flops").
            "fp8": t.fp8,
            # Layers the backward runs forward again, over the whole model (per replica).
            "recomputed_layers": m.layers * (t.passes == 3)
            if c.recomputed is None
            else c.recomputed,
            "recompute_layers": t.recompute_layers,
        },
        "comm": {**c.comm_bytes, "links": c.links},
        "breakdown": {
            "pipeline_s": timeline.makespan,
            "tp_s": c.tp_step_s,
            "dp_s": tail.dp_s,
            "dp_total_s": tail.dp_total_s,
            "dp_hidden_s": tail.dp_total_s - tail.dp_s,
            "optimizer_s": tail.optim_s,
            "bubble_s": timeline.bubble_fraction * timeline.makespan,
        },
        "step_time_s": c.step_s,
        # Chowdhery et al. 2022 (PaLM) App. B: MFU = model FLOPs/s over peak FLOPs/s.
        "mfu": c.model_flops / (c.step_s * layout.world_size * hw.peak_tflops * 1e12),
        "tokens_per_s": c.batch * m.seq_len / c.step_s,
        "advice": [asdict(a) for a in advise(advised)],
        "stage_balance": {
            **balance_json(pipe.layers, c.chunk_durations, pipe.head_rank, pipe.split, pipe.ends),
            "given": pipe.given,  # stage_layers, else the default split
        },
    }
    return Prediction(
        timeline, c.rank_durations, c.tp_pass_s, tail.dp_s, tail.optim_s, out,
        c.chunk_durations, c.teaching_ref_f, pipe, m, t,
    )  # fmt: skip
