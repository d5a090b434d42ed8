"""The side-by-side view model: one column per scenario, a shared time axis, a diff table.

Every number is the core's (``evaluate``); this module only selects, ranks and explains.
The explanations ("why") are codes with the numbers they quote, so each language's text
is a template over the same values.
"""

from __future__ import annotations

import json
from typing import Any

from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.layout import orders
from app.core.teach.advice import BUBBLE_LIMIT, DP_SHARE_LIMIT, TP_SHARE_LIMIT

# Past this many timeline blocks in one column, the column sends its numbers but no blocks.
EVENT_LIMIT = 20_000
AXES = ("tp", "pp", "dp")
STATE_PARTS = ("weights_bytes", "grads_bytes", "optimizer_bytes")
# A column within half a percent of the best's tokens/s would print as "100%" of it: a tie.
TIE_SHARE = 0.995


def role_of(s: Scenario) -> str:
    """dp_only / tp_only / pp_only when one axis is split, 2d / 3d for mixes, single for 1 GPU."""
    split = [a for a in ("dp", "tp", "pp") if getattr(s, a) > 1]
    if len(split) == 1:
        return f"{split[0]}_only"
    return {0: "single", 2: "2d", 3: "3d"}[len(split)]


def _spans(layout: dict[str, Any]) -> dict[str, int]:
    """Nodes one group of each axis spans, for the scenario's own rank order."""
    sizes = layout["sizes"]
    rows = orders.compare(sizes["dp"], sizes["tp"], sizes["pp"], layout["gpus_per_node"])
    return next(r["nodes_spanned"] for r in rows if r["order"] == layout["order"])


BAR_FIELDS = ("stage", "kind", "microbatch", "chunk", "start", "end")


def bars(events: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """A timeline's blocks as columns, one list per field (the page draws them on a canvas):
    a third of the bytes of one object per block, which at pp=16 x 256 micro-batches was
    9 MB for the schedules preset."""
    return {f: [e[f] for e in events] for f in BAR_FIELDS}


def _timeline(tl: dict[str, Any]) -> dict[str, Any]:
    omitted = len(tl["events"]) + len(tl["tail"]) > EVENT_LIMIT
    ends = [e["end"] for e in tl["tail"]]
    return {
        **{k: tl[k] for k in ("units", "makespan", "bubble_fraction", "bubble_over_ideal")},
        "peak_inflight": tl["peak_inflight"],
        "tp_time": tl.get("tp_time", 0.0),
        "bars": bars([] if omitted else [*tl["events"], *tl["tail"]]),
        "end": max([tl["makespan"], *ends]),
        "omitted": omitted,
    }


def _summary(view: dict[str, Any]) -> dict[str, Any]:
    tl, mem, comm = view["timeline"], view["memory"], view["comm"]
    return {
        "step_time_s": view["step_time_s"],
        "mfu": view["mfu"],
        "tokens_per_s": view["tokens_per_s"],
        "global_batch": view["compute"]["global_batch"],
        "bubble_fraction": tl["bubble_fraction"],
        "bubble_over_ideal": tl["bubble_over_ideal"],
        "peak_inflight": max(tl["peak_inflight"]),
        "peak_activation_bytes": max(st["activations_bytes"] for st in mem["per_stage"]),
        "p2p_bytes": comm["pp_bytes"],
        "peak_bytes": mem["peak_bytes"],
        "capacity_bytes": mem["capacity_bytes"],
        "memory_ratio": mem["peak_bytes"] / mem["capacity_bytes"],
        "fits": mem["fits"],
    }


def _valid_json(i: int, s: Scenario, view: dict[str, Any]) -> dict[str, Any]:
    lay = view["layout"]
    layout = {k: lay[k] for k in ("world_size", "order", "gpus_per_node", "nodes", "sizes")}
    layout["crosses_node"] = lay["crosses_node"]
    layout["nodes_spanned"] = _spans(lay)
    sched = {k: v for k, v in view["schedule"].items() if k != "actions"}
    return {
        "index": i,
        "role": role_of(s),
        "query": s.query(),
        "scenario": view["scenario"],
        "valid": True,
        "error": None,
        "layout": layout,
        "schedule": sched,
        "timeline": _timeline(view["timeline"]),
        "memory": view["memory"],
        "comm": view["comm"],
        "breakdown": view["breakdown"],
        "summary": _summary(view),
        "advice": view["advice"],
    }


def _invalid_json(i: int, s: Scenario, exc: ScenarioError) -> dict[str, Any]:
    return {
        "index": i,
        "role": role_of(s),
        "query": s.query(),
        "scenario": s.model_dump(mode="json"),
        "valid": False,
        # The reason in English, and its message key and params for a page in another language.
        "error": {"field": exc.field, "reason": exc.reason, "key": exc.key, "params": exc.params},
    }


def _why(m: dict[str, Any], best: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Why this column is out of memory or slow, quoting the core's numbers."""
    sm, bd, out = m["summary"], m["breakdown"], []
    step = sm["step_time_s"]
    if not sm["fits"]:
        peak = max(m["memory"]["per_stage"], key=lambda st: st["total_bytes"])
        state = sum(peak[k] for k in STATE_PARTS)
        out.append({"code": "oom", "peak_bytes": sm["peak_bytes"], "ratio": sm["memory_ratio"],
                    "capacity_bytes": sm["capacity_bytes"], "state_bytes": state,
                    "activations_bytes": peak["activations_bytes"]})  # fmt: skip
    tp_share = bd["tp_s"] / step
    if m["layout"]["crosses_node"]["tp"]:
        out.append(
            {"code": "tp_inter", "nodes": m["layout"]["nodes_spanned"]["tp"], "share": tp_share}
        )
    elif tp_share > TP_SHARE_LIMIT:
        out.append({"code": "tp_share", "share": tp_share})
    if sm["bubble_fraction"] > BUBBLE_LIMIT:
        m_, p = m["schedule"]["microbatches"], m["layout"]["sizes"]["pp"]
        out.append({"code": "bubble", "fraction": sm["bubble_fraction"], "m": m_, "p": p})
    if bd["dp_s"] / step > DP_SHARE_LIMIT:
        out.append({"code": "dp_share", "share": bd["dp_s"] / step})
    if m["schedule"]["forward_only"]:
        out.append({"code": "forward_only"})
    elif best is m:
        out.append({"code": "best"})
    elif best is not None and sm["fits"]:
        # Throughput ratio, not step time: the columns may carry different global batches.
        # Only a column that fits is measured against the best: an out-of-memory one may
        # compute more tokens/s on paper, and is never called faster than one that runs.
        share = sm["tokens_per_s"] / best["summary"]["tokens_per_s"]
        out.append({"code": "tie"} if share >= TIE_SHARE else {"code": "slower", "share": share})
    return out


def member_json(i: int, s: Scenario, view: dict[str, Any] | ScenarioError) -> dict[str, Any]:
    """One column as soon as its scenario is evaluated; ``rank`` adds the verdicts, which
    need every column."""
    if isinstance(view, ScenarioError):
        return _invalid_json(i, s, view)
    return _valid_json(i, s, view)


def rank(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each valid column's verdicts: why it is slow or out of memory, whether it is the best,
    whether it is ranked at all. Sets them on the columns and returns them, one per column."""
    # A forward-only schedule (naive) does not train, so it is not ranked against those that
    # do: "ranked" false, never the best, and the charts draw it apart (compare_charts.js).
    fitting = [m for m in members if m["valid"] and m["summary"]["fits"] and ranked(m)]
    best = max(fitting, key=lambda m: m["summary"]["tokens_per_s"], default=None)
    out = []
    for m in members:
        if m["valid"]:
            m.update(why=_why(m, best), best=m is best, ranked=ranked(m))
            out.append({k: m[k] for k in ("index", "why", "best", "ranked")})
    return out


def members_json(
    scenarios: list[Scenario], views: list[dict[str, Any] | ScenarioError]
) -> list[dict[str, Any]]:
    out = [member_json(i, s, v) for i, (s, v) in enumerate(zip(scenarios, views, strict=True))]
    rank(out)
    return out


def ranked(member: dict[str, Any]) -> bool:
    """Whether a valid column's numbers are a training step's, so they may be ranked: a
    forward-only schedule's step time, MFU and tokens/s are a forward pass's."""
    return not member["schedule"]["forward_only"]


def winner(members: list[dict[str, Any]]) -> int | None:
    """The index of the column the verdicts call fastest (a training step that fits)."""
    return next((m["index"] for m in members if m["valid"] and m["best"]), None)


def time_axis(members: list[dict[str, Any]]) -> dict[str, Any]:
    """One x range for every timeline, when all are in the same units (else each its own)."""
    valid = [m["timeline"] for m in members if m["valid"]]
    units = sorted({tl["units"] for tl in valid})
    return {
        "shared": len(units) == 1,
        "units": units[0] if len(units) == 1 else None,
        "max": max((tl["end"] for tl in valid), default=0.0) if len(units) == 1 else None,
    }


def _changed(values: list[Any]) -> bool:
    return len({json.dumps(v, sort_keys=True) for v in values}) > 1


def _derived(members: list[dict[str, Any]], key: str, pick: Any) -> dict[str, Any]:
    values = [pick(m) if m["valid"] else None for m in members]
    return {"key": key, "kind": "derived", "values": values, "changed": _changed(values)}


def diff(scenarios: list[Scenario], members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows: every scenario field that differs, then world size, nodes and node crossings."""
    dumps = [s.model_dump(mode="json") for s in scenarios]
    rows = [
        {"key": f, "kind": "field", "values": [d[f] for d in dumps], "changed": True}
        for f in Scenario.model_fields
        if _changed([d[f] for d in dumps])
    ]
    world = [s.world_size for s in scenarios]
    rows.append(
        {"key": "world_size", "kind": "derived", "values": world, "changed": _changed(world)}
    )
    rows.append(_derived(members, "nodes", lambda m: m["layout"]["nodes"]))
    for a in AXES:
        rows.append(
            _derived(members, f"crosses_node.{a}", lambda m, a=a: m["layout"]["crosses_node"][a])
        )
    for a in AXES:
        rows.append(
            _derived(members, f"nodes_spanned.{a}", lambda m, a=a: m["layout"]["nodes_spanned"][a])
        )
    return rows
