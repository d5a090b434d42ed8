"""What the flow view animates, derived from a simulated timeline: sends, steps, in-flight.

The page draws; everything here is a rule about pipelines, so it lives in the core:

* ``sends``: each pipeline hand-off. F at virtual stage v needs F at v-1 (activations go
  downstream); B at v needs B at v+1 (gradients come back). W sends nothing. An output leaves
  when its unit ends: the action itself, or DualPipeV's whole overlapped pair
  (``schedules.release_units``, as the simulator's ``simulate_units``).
* ``captions``: one sentence per frame, as clauses (``flow_captions``).
* ``frames``: the animation's time steps, one per distinct event boundary, and the bubble
  so far at each: ``1 - busy(0..t) / (p * t)`` (Narayanan et al. 2021 §2.2.1, cut at t).
* ``comm`` (only with cp or ep > 1): the CP ring steps and EP all-to-alls inside each F and
  B, per layer and per chunk, from the cost model (``flow_comm``).
* ``inflight``: per stage, the activations held as a step function. An F holds its
  activations from its start; the B (input-gradient pass) releases them at its end, the same
  rule as ``simulate._peak_inflight``, so the step function's maximum is ``peak_inflight``.
"""

from __future__ import annotations

import heapq
from operator import itemgetter
from typing import Any

from app.core.schedules import (
    FORWARD_ONLY,
    RELEASE_BY_UNIT,
    V_SHAPED,
    Action,
    ScheduleName,
    chunks_per_rank,
    release_units,
    virtual_stage,
)
from app.core.support.sorted_runs import sorted_unique
from app.core.views import flow_captions, flow_comm

COMPUTE = ("F", "B", "W")


def _vstage(name: ScheduleName, e: dict[str, Any], pp: int) -> int:
    return virtual_stage(name, e["stage"], e["chunk"], pp)


def release_times(name: ScheduleName, events: list[dict[str, Any]], pp: int) -> list[float]:
    """Per event, when its output reaches other ranks: its unit's end (release_units), which is
    its own end except in DualPipeV's overlapped F&B pairs (torch OVERLAP_F_B)."""
    if name not in RELEASE_BY_UNIT:
        return [e["end"] for e in events]
    rows: list[list[int]] = [[] for _ in range(pp)]  # per rank, event indices in its order
    for i, e in enumerate(events):
        rows[e["stage"]].append(i)
    out = [0.0] * len(events)
    for rank, row in enumerate(rows):
        acts = [Action(events[i]["kind"], events[i]["microbatch"], events[i]["chunk"]) for i in row]
        for i, j in zip(row, release_units(name, acts, rank == pp - 1), strict=True):
            out[i] = events[row[j]]["end"]
    return out


def paired(name: ScheduleName, events: list[dict[str, Any]], pp: int) -> list[list]:
    """The F and B events inside DualPipe(V)'s overlapped pairs, as [stage, kind, microbatch,
    chunk]: their MoE all-to-alls run under the other chunk's compute (durations._pair_times,
    DeepSeek-V3 report §3.2.1), so the flow draws no exposed strip on them."""
    if name not in RELEASE_BY_UNIT:
        return []
    rows: list[list[int]] = [[] for _ in range(pp)]
    for i, e in enumerate(events):
        rows[e["stage"]].append(i)
    out = []
    for rank, row in enumerate(rows):
        acts = [Action(events[i]["kind"], events[i]["microbatch"], events[i]["chunk"]) for i in row]
        units = release_units(name, acts, rank == pp - 1)
        shared = {j for k, j in enumerate(units) if j != k}
        for k, i in enumerate(row):
            e = events[i]
            if e["kind"] in ("F", "B") and (units[k] != k or k in shared):
                out.append([e["stage"], e["kind"], e["microbatch"], e["chunk"]])
    return out


def sends(name: ScheduleName | str, events: list[dict[str, Any]], pp: int, v: int) -> list[dict]:
    """Every cross-rank hand-off: producer end -> consumer start, ordered by send time (ties
    by the sending stage). ``events`` come grouped by rank in execution order (simulate), so
    each rank's sends are already in time order and only need merging: no sort of the whole
    list, which at 10^5 sends held the interpreter for 50-170 ms (bench/bench_heavy.py)."""
    name = ScheduleName(name)
    nvs = pp * chunks_per_rank(name, v)
    by_key = {(e["kind"], e["microbatch"], _vstage(name, e, pp)): e for e in events}
    released = release_times(name, events, pp)
    per_src: list[list[dict]] = [[] for _ in range(pp)]
    for src, send_t in zip(events, released, strict=True):
        vs = _vstage(name, src, pp)
        if src["kind"] == "F" and vs + 1 < nvs:
            dst = by_key.get(("F", src["microbatch"], vs + 1))
        elif src["kind"] == "B" and vs > 0:
            dst = by_key.get(("B", src["microbatch"], vs - 1))
        else:
            dst = None
        if dst is None or dst["stage"] == src["stage"]:
            continue  # the first/last virtual stage, or a V's turn that stays on one rank
        per_src[src["stage"]].append(
            {
                "kind": src["kind"],
                "microbatch": src["microbatch"],
                "src_stage": src["stage"],
                "src_chunk": src["chunk"],
                "dst_stage": dst["stage"],
                "dst_chunk": dst["chunk"],
                "send": send_t,
                "recv": dst["start"],
            }
        )
    # heapq.merge is stable across its inputs, given in stage order: ties go to the lower stage.
    return list(heapq.merge(*per_src, key=itemgetter("send")))


def inflight_steps(name: ScheduleName | str, events: list[dict[str, Any]], pp: int) -> list:
    """Per stage ``[[t, held], ...]``: activations held from time t on (changes only)."""
    name = ScheduleName(name)
    changes: list[list[tuple[float, int]]] = [[] for _ in range(pp)]
    for e in events:
        if e["kind"] == "F":
            changes[e["stage"]].append((e["start"], +1))
            if name in FORWARD_ONLY:  # no autograd graph kept: released when F ends
                changes[e["stage"]].append((e["end"], -1))
        elif e["kind"] == "B":
            changes[e["stage"]].append((e["end"], -1))
    steps = []
    for stage_changes in changes:
        held, out = 0, [[0.0, 0]]
        by_time: dict[float, int] = {}
        for t, delta in stage_changes:
            by_time[t] = by_time.get(t, 0) + delta
        # Net change per instant: a B ending as the next F starts leaves the count unchanged.
        for t in sorted(by_time):
            held += by_time[t]
            if out[-1][0] == t:
                out[-1][1] = held
            elif held != out[-1][1]:
                out.append([t, held])
        steps.append(out)
    return steps


def frames(events: list[dict[str, Any]], tail: list[dict[str, Any]], pp: int) -> dict:
    """Animation steps: boundary times and the pipeline bubble so far at each.

    busy(t) is piecewise linear between boundaries, so one sweep over them is exact:
    busy(t_{k+1}) = busy(t_k) + (compute events running in [t_k, t_{k+1})) * (t_{k+1} - t_k).
    """
    compute = [e for e in events if e["kind"] in COMPUTE]
    edges = [*(e["start"] for e in events + tail), *(e["end"] for e in events + tail)]
    times = sorted_unique([0.0, *edges])
    makespan = max((e["end"] for e in compute), default=0.0)
    delta: dict[float, int] = {}
    for e in compute:
        delta[e["start"]] = delta.get(e["start"], 0) + 1
        delta[e["end"]] = delta.get(e["end"], 0) - 1
    bubble, busy, running, prev = [], 0.0, 0, 0.0
    for t in times:
        cut = min(t, makespan)
        busy += running * (cut - min(prev, makespan))
        running += delta.get(t, 0)
        prev = t
        bubble.append(1.0 - busy / (pp * cut) if cut > 0 else 0.0)
    return {"times": times, "bubble_so_far": bubble, "makespan": makespan}


def active_stages_at(events: list[dict[str, Any]], t: float) -> list[int]:
    """Stages running compute (F, B or W) during the step that starts at ``t``."""
    busy = {e["stage"] for e in events if e["kind"] in COMPUTE and e["start"] <= t < e["end"]}
    return sorted(busy)


def active_ranks_at(layout: dict[str, Any], events: list[dict[str, Any]], t: float) -> list[int]:
    """The article's 'active GPUs per time step', for any schedule: every rank of a busy stage."""
    busy = set(active_stages_at(events, t))
    return [r["rank"] for r in layout["ranks"] if r["pp"] in busy]


def flow_view(view: dict[str, Any]) -> dict[str, Any]:
    """The flow page's extra data for one evaluated scenario (see ``evaluate``)."""
    s, tl = view["scenario"], view["timeline"]
    pp, events, tail = view["layout"]["sizes"]["pp"], tl["events"], tl.get("tail") or []
    name = ScheduleName(s["schedule"])
    out = {
        # What the legend explains: how many chunk shades, and whether they run in a V.
        "chunks": {"per_rank": chunks_per_rank(name, s["virtual_stages"]), "v": name in V_SHAPED},
        "sends": sends(s["schedule"], events, pp, s["virtual_stages"]),
        "inflight": inflight_steps(s["schedule"], events, pp),
        "frames": frames(events, tail, pp),
    }
    lc = tl.get("layer_comm")
    if lc is not None:  # cp or ep > 1: the ring steps and all-to-alls inside each F and B
        per_stage = (view.get("stage_balance") or {}).get("per_stage") or []
        layers = [st["layers"] for st in per_stage]
        out["comm"] = {**lc, "chunks": flow_comm.chunk_comm(lc, layers) if layers else None}
        if lc.get("ep"):
            out["comm"]["paired"] = paired(name, events, pp)
    out["captions"] = flow_captions.captions(
        view, out["sends"], out["frames"]["times"], out.get("comm")
    )
    return out
