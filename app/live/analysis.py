"""The live page's view of one step: measured timeline, predicted ghost, residuals, bubble
causes, rank heatmap. Pure assembly over app.core.fidelity.measured; the page only draws this.

``window`` is the records of a few steps ending at the drawn one: the mean durations that
feed the prediction come from all of them but step 0 (steadier than one step), everything
else from the drawn step alone.
"""

from __future__ import annotations

from collections import defaultdict

from app.core.fidelity import measured
from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.layout.topology import Layout, parse_order
from app.core.schedules import ScheduleError
from app.core.schedules.deadlock import DeadlockError
from app.core.simulate import Timeline
from app.core.teach import advice

MAX_DRAWN_EVENTS = 60_000  # past this the browser stalls; tp pulses go first, then sends
DROP_ORDER = ("tp", "pp_send", "pp_recv")


def layout_of(info: RunInfo) -> Layout:
    return Layout(info.dp, info.tp, info.pp, parse_order(info.order), info.gpus_per_node)


def rows(layout: Layout) -> list[dict]:
    """Every rank, grouped by (dp, pp, tp) as the timeline draws them."""
    out = []
    for rank in range(layout.world_size):
        c = layout.coord(rank)
        out.append({"rank": rank, "dp": c.dp, "pp": c.pp, "tp": c.tp, "node": layout.node(rank)})
    return sorted(out, key=lambda r: (r["dp"], r["pp"], r["tp"]))


def timeline_events(records: list[ProbeRecord], origin_s: float) -> tuple[list[dict], int]:
    """Measured events on one axis (seconds after the step's earliest t0), and how many were
    left out to stay drawable."""
    events = [
        {
            "rank": r.rank, "stage": r.coord.pp, "kind": e.kind, "microbatch": e.microbatch,
            "chunk": e.chunk, "start": r.t0 + e.start - origin_s, "end": r.t0 + e.end - origin_s,
            "peer": e.peer,
        }
        for r in records
        for e in r.events
    ]  # fmt: skip
    dropped = 0
    for kind in DROP_ORDER:
        if len(events) <= MAX_DRAWN_EVENTS:
            break
        kept = [e for e in events if e["kind"] != kind]
        dropped += len(events) - len(kept)
        events = kept
    return events, dropped


def links(events: list[dict]) -> list[dict]:
    """Send -> receive arrows: the k-th send a->b of a microbatch pairs with the k-th receive
    on b from a of that microbatch (messages between two ranks arrive in posting order)."""
    sends, recvs = defaultdict(list), defaultdict(list)
    for e in events:
        if e["kind"] == "pp_send" and e["peer"] is not None:
            sends[(e["rank"], e["peer"], e["microbatch"])].append(e)
        elif e["kind"] == "pp_recv" and e["peer"] is not None:
            recvs[(e["peer"], e["rank"], e["microbatch"])].append(e)
    out = []
    for key, sent in sends.items():
        got = sorted(recvs.get(key, []), key=lambda e: e["start"])
        for s, r in zip(sorted(sent, key=lambda e: e["start"]), got, strict=False):
            out.append(
                {"src": key[0], "dst": key[1], "microbatch": key[2],
                 "send": s["start"], "recv": r["end"]}
            )  # fmt: skip
    return sorted(out, key=lambda x: x["send"])


def predicted_json(tl: Timeline, offset_s: float, tail_s: list[float]) -> dict:
    return {
        "events": [
            {
                "stage": e.stage,
                "kind": e.kind,
                "microbatch": e.microbatch,
                "chunk": e.chunk,
                "start": e.start + offset_s,
                "end": e.end + offset_s,
            }
            for e in tl.events
        ],  # fmt: skip
        "makespan_s": tl.makespan,
        "bubble_fraction": tl.bubble_fraction,
        "offset_s": offset_s,
        "step_time_s": tl.makespan + max(tail_s, default=0.0),
    }


def bubble_json(breakdowns, idle_s: list[float]) -> dict:
    """Per rank and averaged over ranks: step time, compute and the bubble's causes."""
    per_rank = []
    for b in breakdowns:
        split = measured.causes(b, idle_s[b.stage] if idle_s else 0.0)
        per_rank.append({"rank": b.rank, "step_time_s": b.step_time_s, "compute_s": b.compute_s}
                        | split)  # fmt: skip
    n = len(per_rank) or 1
    mean = {k: sum(r[k] for r in per_rank) / n for k in ("step_time_s", "compute_s")}
    mean |= {k: sum(r[k] for r in per_rank) / n for k in measured.CAUSES}
    return {"causes": list(measured.CAUSES), "mean": mean, "per_rank": per_rank}


def heatmap(layout: Layout, breakdowns, records: list[ProbeRecord]) -> dict:
    """The rank grid: one row per pipeline stage, one column per (dp, tp) pair."""
    cols = [(d, t) for d in range(layout.dp) for t in range(layout.tp)]
    grid = {k: [[None] * len(cols) for _ in range(layout.pp)] for k in _HEAT}
    ranks = [[layout.rank_of(d, p, t) for d, t in cols] for p in range(layout.pp)]
    mem = {r.rank: r.mem for r in records}
    for b in breakdowns:
        c = layout.coord(b.rank)
        row, col = c.pp, cols.index((c.dp, c.tp))
        values = {"step_time_s": b.step_time_s, "idle_frac": b.idle_frac,
                  "comm_frac": b.comm_frac, "mem_bytes": mem.get(b.rank)}  # fmt: skip
        for k, v in values.items():
            grid[k][row][col] = v
    return {
        "x": [f"dp{d}·tp{t}" for d, t in cols],
        "y": [f"pp{p}" for p in range(layout.pp)],
        "ranks": ranks,
        "metrics": grid,
    }


_HEAT = ("step_time_s", "idle_frac", "comm_frac", "mem_bytes")


def _pipeline_s(events: list[dict], first_s: float) -> float:
    """From the first compute to the last F/B/W end: what the predicted makespan models."""
    ends = [e["end"] for e in events if e["kind"] in measured.PIPE]
    return max(ends) - first_s if ends else 0.0


def advice_json(info: RunInfo, layout: Layout, breakdowns) -> list[dict]:
    """The core's tuning rules fed with this step's measured shares. The step is its
    slowest rank; TP and DP time are the busiest rank's; the bubble is the mean share of
    the step spent waiting for pipeline peers. Peak memory is left out (memory_ratio 0):
    a probe record carries peak bytes but not the device's capacity."""
    if not breakdowns:
        return []
    step_s = max(b.step_time_s for b in breakdowns)
    waits = [b.pp_wait_s / b.step_time_s for b in breakdowns if b.step_time_s > 0]
    b = advice.Breakdown(
        step_s=step_s, tp_s=max(b.tp_s for b in breakdowns), dp_s=max(b.dp_s for b in breakdowns),
        bubble_fraction=sum(waits) / len(waits) if waits else 0.0, memory_ratio=0.0,
        microbatches=info.microbatches, pp=info.pp, tp=info.tp, schedule=info.schedule.value,
        tp_crosses_node=layout.crosses_node("tp"),
    )  # fmt: skip
    return [
        {"rule": a.rule, "message": a.message, "message_zh": a.message_zh} for a in advice.advise(b)
    ]


def warm(window: list[ProbeRecord]) -> list[ProbeRecord]:
    """The window without step 0 when it holds later steps: the first step pays one-time
    costs (allocator growth, collective setup) that no later step repeats."""
    later = [r for r in window if r.step > 0]
    return later or window


def analyse(info: RunInfo, window: list[ProbeRecord], step: int) -> dict:
    layout = layout_of(info)
    mine = [r for r in window if r.step == step]
    durations = measured.stage_durations(warm(window), info.pp)
    tail = measured.stage_tail_s(warm(window), info.pp)
    t0, first = measured.pipeline_origin(mine)
    try:
        tl = measured.predict(info, durations) if mine else None
    except (ScheduleError, DeadlockError):
        tl = None
    breakdowns = [measured.breakdown(r) for r in mine]
    idle = measured.stage_idle_s(tl, info.pp) if tl else []
    events, left_out = timeline_events(mine, t0)
    actions = measured.residuals(mine, tl, first - t0, t0) if tl else []
    return {
        "run": info.run,
        "step": step,
        "ranks_present": len(mine),
        "world": layout.world_size,
        "complete": len(mine) == layout.world_size,
        "window": sorted({r.step for r in window}),
        "rows": rows(layout),
        "measured": {
            "events": events,
            "left_out": left_out,
            "links": links(events),
            "pipeline_s": _pipeline_s(events, first - t0),
        },
        "predicted": predicted_json(tl, first - t0, tail) if tl else None,
        "durations": [
            {"stage": s, "f": d.f, "b": d.b, "w": d.w, "p2p": d.p2p, "tail": tail[s]}
            for s, d in enumerate(durations)
        ],
        "residuals": {"actions": actions, "by_kind": measured.residual_summary(actions)},
        "bubble": bubble_json(breakdowns, idle),
        "heatmap": heatmap(layout, breakdowns, mine),
        "advice": advice_json(info, layout, breakdowns),
    }
