"""The cost model's sections of the view: memory, compute, comm, step time, MFU, advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.core import costs, costs_time
from app.core.advice import Breakdown, advise
from app.core.presets import HardwareSpec, ModelSpec
from app.core.scenario import Scenario
from app.core.schedules import Action, stage_location
from app.core.simulate import Durations, Timeline, simulate
from app.core.specs import training_of
from app.core.topology import Layout

GIB = 1 << 30


@dataclass(frozen=True)
class Prediction:
    timeline: Timeline  # simulated with the cost model's durations, in seconds
    durations: list[Durations]
    tp_pass_s: float  # TP all-reduce seconds inside one chunk's F (and again in its B)
    dp_s: float
    optim_s: float
    sections: dict[str, Any]


def _memory_json(stages: list[costs.StageMemory], capacity: float) -> dict[str, Any]:
    per_stage = [{**asdict(st), "total_bytes": st.total_bytes} for st in stages]
    peak = max(st.total_bytes for st in stages)
    return {
        "per_stage": per_stage,
        "capacity_bytes": capacity,
        "peak_bytes": peak,
        "fits": peak <= capacity,
    }


def predict(
    s: Scenario, m: ModelSpec, hw: HardwareSpec, layout: Layout, actions: list[list[Action]]
) -> Prediction:
    t = training_of(s)
    head = stage_location(s.schedule, s.pp * s.chunks - 1, s.pp)[0]
    durations, tp_pass = costs_time.stage_durations(m, hw, t, layout, s.chunks, head)
    timeline = simulate(s.schedule, actions, durations, s.virtual_stages)
    stages = costs.stage_memory(m, t, (s.dp, s.tp, s.pp), s.chunks, head, timeline.peak_inflight)
    rank_params = max(st.params for st in stages)
    comm = costs_time.step_comm_bytes(m, t, layout, s.chunks, rank_params)
    dp_s = costs_time.dp_seconds(comm["dp_bytes"], hw, layout)
    optim_s = 0.0 if t.forward_only else costs_time.optimizer_seconds(rank_params, t, s.dp, hw)
    step_s = timeline.makespan + dp_s + optim_s
    batch = s.micro_batch_size * s.microbatches * s.dp
    flops, hw_flops = costs.model_flops(m, batch), costs.hardware_flops(m, batch, t.recompute)
    if t.forward_only:  # model_flops is 3x the forward (backward = 2x forward): keep the forward
        flops = hw_flops = flops / 3.0
    capacity = hw.hbm_gib * GIB
    memory = _memory_json(stages, capacity)
    tp_step_s = tp_pass * t.passes * s.microbatches * s.chunks
    links = costs_time.links_of(layout)
    breakdown = Breakdown(
        step_s=step_s,
        tp_s=tp_step_s,
        dp_s=dp_s,
        bubble_fraction=timeline.bubble_fraction,
        memory_ratio=memory["peak_bytes"] / capacity,
        microbatches=s.microbatches,
        pp=s.pp,
        tp=s.tp,
        schedule=s.schedule.value,
        tp_crosses_node=links.tp == "inter",
    )
    sections = {
        "model": asdict(m),
        "hardware": asdict(hw),
        "memory": memory,
        "compute": {
            "params_total": costs.total_params(m),
            "global_batch": batch,
            "model_flops_per_iteration": flops,
            "hardware_flops_per_iteration": hw_flops,
        },
        "comm": {**comm, "links": asdict(links)},
        "breakdown": {
            "pipeline_s": timeline.makespan,
            "tp_s": tp_step_s,
            "dp_s": dp_s,
            "optimizer_s": optim_s,
            "bubble_s": timeline.bubble_fraction * timeline.makespan,
        },
        "step_time_s": step_s,
        # Chowdhery et al. 2022 (PaLM) App. B: MFU = model FLOPs/s over peak FLOPs/s.
        "mfu": flops / (step_s * layout.world_size * hw.peak_tflops * 1e12),
        "tokens_per_s": batch * m.seq_len / step_s,
        "advice": [asdict(a) for a in advise(breakdown)],
    }
    return Prediction(timeline, durations, tp_pass, dp_s, optim_s, sections)
