"""One scenario's JSON for the pages: the layout, the schedule, the timeline and the step's
tail, in the shapes the views' JS reads."""

from __future__ import annotations

from typing import Any

from app.core import schedules
from app.core.inputs.scenario import Scenario
from app.core.layout import mesh
from app.core.layout.topology import AXES, Layout
from app.core.simulate import Timeline

# Axes beyond the article's three, shown only when used (cp: the CP ring; ep: the EP group).
EXTRA_AXES = ("cp", "ep")


def layout_json(layout: Layout) -> dict[str, Any]:
    """Ranks, sizes, groups and node crossings. cp and ep (coordinates, the CP rings, the EP
    groups) appear only when > 1, and the expert-TP (etp) and expert-DP (edp) groups only when
    etp != tp, so a 3D scenario's layout reads as it always has."""
    st, world, gpn = layout.strides, layout.world_size, layout.gpus_per_node
    extra = tuple(a for a in EXTRA_AXES if layout.size(a) > 1)
    if layout.expert_tp != layout.tp:  # MoE parallel folding: the expert-TP groups too
        extra += ("etp",)
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
    for a in extra:  # a second pass only when used: the 3D rows are built as fast as before
        stride, n = st[a], layout.size(a)
        for row in ranks:
            row[a] = (row["rank"] // stride) % n
    out = {
        "world_size": world,
        "order": "-".join(layout.order),
        "gpus_per_node": gpn,
        "nodes": (world + gpn - 1) // gpn,
        "sizes": {a: layout.size(a) for a in (*AXES, *extra)},
        "ranks": ranks,
        "groups": {a: layout.groups(a) for a in ("tp", "pp", "dp", *extra)},
        "crosses_node": {a: layout.crosses_node(a) for a in ("tp", "pp", "dp", *extra)},
    }
    if "etp" in extra:
        # The expert-DP groups, where expert gradients are reduced: Megatron-LM
        # megatron/core/parallel_state.py builds _EXPERT_DATA_PARALLEL_GROUP from
        # expert_decoder_rank_generator.get_ranks('dp'). Groups and crossings only, not
        # sizes: pages.article_view rebuilds a Layout from the sizes.
        out["groups"]["edp"] = layout.groups("edp")
        out["crosses_node"]["edp"] = layout.crosses_node("edp")
    if extra:  # the order with cp and ep in their places, as the orders table spells it
        out["full_order"] = "-".join(a for a in mesh.full_order(layout.order) if a in
                                     ("tp", "pp", "dp", *extra))  # fmt: skip
    return out


def schedule_json(s: Scenario, actions: list[list[schedules.Action]] | None) -> dict[str, Any]:
    """The schedule's facts and, unless ``actions`` is None, its per-rank action lists."""
    out = {
        "name": s.schedule.value,
        "microbatches": s.microbatches,
        "virtual_stages": s.chunks,
        "split_backward": s.schedule in schedules.SPLIT_BACKWARD,
        "forward_only": s.schedule in schedules.FORWARD_ONLY,
    }
    if actions is not None:
        out["actions"] = schedules.compact(actions, show_chunk=s.chunks > 1)
    return out


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


def tail_json(
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
