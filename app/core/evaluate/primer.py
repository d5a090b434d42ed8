"""The collectives primer for one scenario: the ring on the selected DP or TP group, ZeRO's
partitions and schedule, and activation memory over the step, all from the core's own data
(evaluate.prepare's layout, timeline and cost sections)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.cost import comm, memory
from app.core.evaluate.one_scenario import prepare
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import MAX_WORLD, Scenario, ScenarioError
from app.core.layout.topology import Layout
from app.core.schedules import FORWARD_ONLY
from app.core.views.collectives_primer import ring_json, step_count
from app.core.views.cp_ep_primer import cp_ep_json
from app.core.views.memory_timeline import memory_timeline
from app.core.views.zero_primer import zero_json


class PrimerParams(BaseModel):
    """The primer's own URL state: which group's ring, through which rank, at which step."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: Literal["dp", "tp"] = Field("dp", description="the ring's axis: dp or tp")
    rank: int = Field(0, ge=0, le=MAX_WORLD, description="a global rank; the ring is its group")
    step: int = Field(0, ge=0, le=1 << 20, description="ring step shown, 0 = before any send")


PRIMER_KEYS = frozenset(PrimerParams.model_fields)


def ring_source(s: Scenario, axis: str, rank_params: int) -> tuple[str, float]:
    """What the group all-reduces, in bytes: DP the rank's gradients (comm.step_comm_bytes),
    TP one layer pass's b x s x h activation (comm.tp_message_bytes)."""
    m, t = specs.model_of(s), specs.training_of(s)
    if axis == "tp":
        return "activations", float(comm.tp_message_bytes(m, t))
    return "gradients", float(rank_params * t.element_bytes)


def activation_sizes(s: Scenario, layers: list[list[int]]) -> list[list[float]]:
    """One micro-batch's activations of each rank's chunks (cost/memory.py, Korthikanti
    et al. 2022 Table 2 per layer, times the chunk's layers)."""
    m, t = specs.model_of(s), specs.training_of(s)
    per_layer = memory.activation_bytes_per_layer(m, t, s.tp)
    return [[per_layer * n for n in row] for row in layers]


def shard_group(layout: Layout, rank: int, dp_shard: int | None = None) -> list[int]:
    """The ranks ZeRO shards over with ``rank``: its DP group and, under context parallelism,
    their CP ranks too (cost/memory.py stage_memory; Megatron-LM's intra_dp_cp_group); under
    HSDP only its own block of dp_shard DP ranks (cost/comm.py shard_placement)."""
    dp = layout.group("dp", rank)
    if dp_shard:
        start = dp.index(rank) // dp_shard * dp_shard
        dp = dp[start : start + dp_shard]
    return sorted({c for d in dp for c in layout.group("cp", d)})


def _check_rank(p: PrimerParams, world: int) -> None:
    if p.rank >= world:
        raise ScenarioError.keyed(
            "rank", "page.rank_outside", "rank {rank} is outside the world of {world}",
            rank=p.rank, world=world,
        )  # fmt: skip


def _check_step(p: PrimerParams, n: int) -> None:
    if p.step > step_count(n):
        raise ScenarioError.keyed(
            "step", "primer.step_past",
            "step {step} is past the ring's last: 2(n-1) = {last} for n = {n}",
            step=p.step, last=step_count(n), n=n,
        )  # fmt: skip


def primer(
    s: Scenario, p: PrimerParams, hardware: Mapping[str, HardwareSpec] = HARDWARE
) -> dict[str, Any]:
    """Everything the primer page draws. Raises ScenarioError naming one field."""
    layout, _, cost = prepare(s, hardware)
    _check_rank(p, layout.world_size)
    ranks = layout.group(p.group, p.rank)
    _check_step(p, len(ranks))
    stage = layout.coord(p.rank).pp
    mem = cost.sections["memory"]
    row = mem["per_stage"][stage]
    kind, size = ring_source(s, p.group, row["params"])
    layers, t = cost.pipeline.layers, cost.training
    timeline = cost.timeline
    return {
        "group": {"axis": p.group, "rank": p.rank, "stage": stage, "position": ranks.index(p.rank)},
        "step": p.step,
        "ring": {**ring_json(ranks, size), "source": kind},
        "zero": zero_json(
            row["params"],
            t,
            shard_group(layout, p.rank, t.dp_shard),
            sum(layers[stage]),
            row["activations_bytes"],
        ),
        "memory_timeline": {
            "units": "s",
            "makespan": timeline.makespan,
            "stages": memory_timeline(
                timeline.events,
                activation_sizes(s, layers),
                s.schedule in FORWARD_ONLY,
                timeline.makespan,
            ),
            "peak_inflight": timeline.peak_inflight,
        },
        "memory": mem,
        "cp_ep": cp_ep_json(specs.model_of(s), specs.hardware_of(s, hardware), t, layout, p.rank),
        "world_size": layout.world_size,
        "sizes": {"dp": s.dp, "tp": s.tp, "pp": s.pp, "cp": s.cp, "ep": s.ep},
        "query": s.query(),
    }
