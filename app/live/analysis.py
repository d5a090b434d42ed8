"""The live page's view of one step: measured timeline, the replay ghost, residuals, bubble
causes, rank heatmap, measured peak memory beside the predicted (app.live.run_memory), and
the cost model's a-priori prediction. Pure assembly over app.core.fidelity.measured and
app.live.a_priori; the page only draws this.

Two numbers stand beside the measured one, and only one of them is a prediction:

* ``replay``: the core's simulation of this run's schedule fed with this run's own mean
  F/B/W per stage (app.core.fidelity.measured.predict). It matches the measured pipeline by
  construction, up to waiting and host time; the ghost and the residuals are against it.
  (``predicted`` is the same object under its old name, kept for API readers.)
* ``a_priori``: the cost model's prediction for the run's configuration on a hardware entry
  (app.live.a_priori says which and why), with nothing measured going in.

Shares of the step have one basis everywhere (``shares``): each part's mean seconds per
rank over the mean rank's step time. The table of where the step went and the advice's
rules both use it, so "TP is 49% of the step" reads the same in both.

``window`` is the records of a few steps ending at the drawn one: the mean durations that
feed the replay come from all of them but step 0 (steadier than one step), everything
else from the drawn step alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from app.core.fidelity import measured
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.protocol import ProbeRecord, RunInfo, run_layout
from app.core.layout.topology import Layout
from app.core.schedules import ScheduleError
from app.core.schedules.deadlock import DeadlockError
from app.core.simulate import Timeline
from app.core.teach import advice
from app.core.views.row_fold import fold_rows, fold_summary
from app.live import a_priori, replay_link, run_memory

MAX_DRAWN_EVENTS = 60_000  # past this the browser stalls; tp pulses go first, then sends
DROP_ORDER = ("tp", "pp_send", "pp_recv")


def layout_of(info: RunInfo) -> Layout:
    return run_layout(info)


def rows(layout: Layout) -> list[dict]:
    """Every rank, grouped by (dp, pp, cp, tp) as the timeline draws them; cp is named only
    in a run that has it."""
    out = []
    for rank in range(layout.world_size):
        c = layout.coord(rank)
        row = {"rank": rank, "dp": c.dp, "pp": c.pp, "tp": c.tp, "node": layout.node(rank)}
        out.append(row | ({"cp": c.cp} if layout.cp > 1 else {}))
    return sorted(out, key=lambda r: (r["dp"], r["pp"], r.get("cp", 0), r["tp"]))


def _last_end(r: ProbeRecord) -> float:
    return max((e.end for e in r.events), default=0.0)


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


def bubble_json(breakdowns, idle_s: list[float], names=measured.CAUSES) -> dict:
    """Per rank and averaged over ranks: step time, compute and the bubble's causes
    (``names``: measured.causes_of the run, cp and ep among them where it has them)."""
    per_rank = []
    for b in breakdowns:
        split = measured.causes(b, idle_s[b.stage] if idle_s else 0.0, names)
        per_rank.append({"rank": b.rank, "step_time_s": b.step_time_s, "compute_s": b.compute_s}
                        | split)  # fmt: skip
    n = len(per_rank) or 1
    mean = {k: sum(r[k] for r in per_rank) / n for k in ("step_time_s", "compute_s")}
    mean |= {k: sum(r[k] for r in per_rank) / n for k in names}
    return {"causes": list(names), "mean": mean, "per_rank": per_rank}


def heatmap(layout: Layout, breakdowns, records: list[ProbeRecord]) -> dict:
    """The rank grid: one row per pipeline stage, one column per (dp, tp) pair, or per
    (dp, cp, tp) in a run with cp."""
    cols = [(d, c, t) for d in range(layout.dp) for c in range(layout.cp) for t in range(layout.tp)]
    grid = {k: [[None] * len(cols) for _ in range(layout.pp)] for k in _HEAT}
    ranks = [[layout.rank_of(d, p, t, c) for d, c, t in cols] for p in range(layout.pp)]
    mem = {r.rank: r.mem for r in records}
    col_of = {dct: i for i, dct in enumerate(cols)}  # not cols.index: quadratic in the world
    for b in breakdowns:
        c = layout.coord(b.rank)
        row, col = c.pp, col_of[(c.dp, c.cp, c.tp)]
        values = {"step_time_s": b.step_time_s, "idle_frac": b.idle_frac,
                  "comm_frac": b.comm_frac, "mem_bytes": mem.get(b.rank)}  # fmt: skip
        for k, v in values.items():
            grid[k][row][col] = v
    return {
        "x": [f"dp{d}·cp{c}·tp{t}" if layout.cp > 1 else f"dp{d}·tp{t}" for d, c, t in cols],
        "y": [f"pp{p}" for p in range(layout.pp)],
        "ranks": ranks,
        "metrics": grid,
    }


_HEAT = ("step_time_s", "idle_frac", "comm_frac", "mem_bytes")


def _pipeline_s(events: list[dict], first_s: float) -> float:
    """From the first compute to the last F/B/W end: what the predicted makespan models."""
    ends = [e["end"] for e in events if e["kind"] in measured.PIPE]
    return max(ends) - first_s if ends else 0.0


def shares_json(breakdowns, parts=measured.PARTS) -> dict:
    """The one basis of every share on the page: the mean rank's step (each part's mean
    seconds per rank over the mean step time per rank), so the parts add up to 100%. The
    slowest rank's step (the step's own time, the trend's) is given beside it. ``parts``:
    measured.parts_of the run (cp_s and ep_s where it has them)."""
    n = len(breakdowns) or 1
    mean = {k: sum(getattr(b, k) for b in breakdowns) / n for k in parts}
    slowest = max((b.step_time_s for b in breakdowns), default=0.0)
    return {"basis": "mean_rank_step", "step_time_s": mean["step_time_s"],
            "slowest_step_time_s": slowest, "mean": mean}  # fmt: skip


def advice_json(info: RunInfo, layout: Layout, breakdowns) -> list[dict]:
    """The core's tuning rules fed with this step's measured time on the page's one basis
    (``shares_json``): mean TP, CP, EP, DP and pipeline-wait seconds per rank over the mean
    rank's step, the same shares as the table of where the step went (a 3D run's CP and EP are
    0 and 1: their rules stay silent). Peak memory is left out (memory_ratio 0): a probe
    record carries peak bytes but not the device's capacity."""
    if not breakdowns:
        return []
    mean = shares_json(breakdowns, measured.parts_of(info))["mean"]
    step_s = mean["step_time_s"]
    b = advice.Breakdown(
        step_s=step_s, tp_s=mean["tp_s"], dp_s=mean["dp_s"],
        bubble_fraction=mean["pp_wait_s"] / step_s if step_s > 0 else 0.0, memory_ratio=0.0,
        microbatches=info.microbatches, pp=info.pp, tp=info.tp, schedule=info.schedule.value,
        tp_crosses_node=layout.crosses_node("tp"),
        cp_s=mean.get("cp_s", 0.0), ep_s=mean.get("ep_s", 0.0), cp=info.cp, ep=info.ep,
        cp_crosses_node=layout.crosses_node("cp"), ep_crosses_node=layout.crosses_node("ep"),
    )  # fmt: skip
    return [
        {"rule": a.rule, "message": a.message, "message_zh": a.message_zh} for a in advice.advise(b)
    ]


def warm(window: list[ProbeRecord]) -> list[ProbeRecord]:
    """The window without step 0 when it holds later steps: the first step pays one-time
    costs (allocator growth, collective setup) that no later step repeats."""
    later = [r for r in window if r.step > 0]
    return later or window


def analyse(
    info: RunInfo,
    window: list[ProbeRecord],
    step: int,
    registry: Mapping[str, HardwareSpec] = HARDWARE,
) -> dict:
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
    every = rows(layout)
    drawn = fold_rows(every, {r.rank: r.t0 - t0 + _last_end(r) for r in mine})
    shown = {r["rank"] for r in drawn}
    events, left_out = timeline_events([r for r in mine if r.rank in shown], t0)
    actions = measured.residuals(mine, tl, first - t0, t0) if tl else []
    replay = predicted_json(tl, first - t0, tail) if tl else None
    prior = a_priori.predict(info, registry)  # its memory figures serve run_memory too
    flow = replay_link.flow_query(prior, durations)  # the run's scenario, measured
    return {
        "run": info.run,
        "step": step,
        "ranks_present": len(mine),
        "world": layout.world_size,
        "complete": len(mine) == layout.world_size,
        "window": sorted({r.step for r in window}),
        "rows": drawn,
        "fold": fold_summary(drawn, layout.world_size),
        "measured": {
            "events": events,
            "left_out": left_out,
            "links": links(events),
            "pipeline_s": _pipeline_s(events, first - t0),
            "step_time_s": max((b.step_time_s for b in breakdowns), default=0.0),
        },
        "replay": replay,
        "predicted": replay,  # the replay's old name: API readers keep working
        "a_priori": prior,
        "flow_query": flow,
        "flow_left_out": replay_link.left_out(info, flow),  # the run's axes the view lacks
        "shares": shares_json(breakdowns, measured.parts_of(info)),
        "durations": [
            {"stage": s, "f": d.f, "b": d.b, "w": d.w, "p2p": d.p2p, "tail": tail[s]}
            for s, d in enumerate(durations)
        ],
        "residuals": {"actions": actions, "by_kind": measured.residual_summary(actions)},
        "bubble": bubble_json(breakdowns, idle, measured.causes_of(info)),
        "heatmap": heatmap(layout, breakdowns, mine),
        "memory": run_memory.memory_json(info, mine, prior),
        "advice": advice_json(info, layout, breakdowns),
    }
