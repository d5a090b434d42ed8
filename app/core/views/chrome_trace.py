"""A simulated timeline as Chrome trace-event JSON, which Perfetto and chrome://tracing open.

One process per pipeline rank; compute and each kind of communication on their own
threads, so no two slices on one thread overlap; a flow arrow (``ph`` ``s`` -> ``f``) from
every PP send to its receive. Format: the Trace Event Format document (catapult), with
``ts``/``dur`` in microseconds.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from app.core.views.flow import sends

US_PER_S = 1_000_000
# Abstract teaching units have no physical scale; one unit is drawn as one millisecond.
US_PER_UNIT = 1_000
# Events per streamed piece: ~120 KB of JSON, a few ms of json.dumps.
CHUNK_EVENTS = 1_000

THREADS = {
    "compute": (1, "compute (F/B/W, optimizer)"),
    "tp": (2, "comm: TP all-reduce"),
    # One thread per direction: a rank's activation and gradient transfers may overlap.
    "pp_send_F": (3, "comm: PP send activations"),
    "pp_recv_F": (4, "comm: PP recv activations"),
    "pp_send_B": (5, "comm: PP send gradients"),
    "pp_recv_B": (6, "comm: PP recv gradients"),
    "dp": (7, "comm: DP all-reduce"),
}
COMPUTE_KINDS = {"F", "B", "W", "optim"}


def tp_time_of(timeline: dict[str, Any], stage: int, kind: str) -> float:
    """The TP all-reduce time inside one F or B of ``stage``, 0 when the core gives none.

    Accepts ``tp_time`` as one number for every pass, one ``{"F": s, "B": s}`` per stage,
    or ``{"F": [...], "B": [...]}``.
    """
    tp = timeline.get("tp_time")
    if isinstance(tp, (int, float)) and not isinstance(tp, bool):
        return float(tp)
    try:
        if isinstance(tp, list):
            return float(tp[stage].get(kind, 0.0) or 0.0)
        if isinstance(tp, dict):
            return float((tp.get(kind) or [])[stage] or 0.0)
    except (AttributeError, IndexError, TypeError, ValueError):
        return 0.0
    return 0.0


def _meta(pid: int, name: str, tid: int | None = None) -> dict[str, Any]:
    if tid is None:
        return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


def _label(e: dict[str, Any], show_chunk: bool) -> str:
    names = {"dp": "DP all-reduce", "dp_hidden": "DP all-reduce, hidden under the backward",
             "optim": "optimizer step"}  # fmt: skip
    if e["kind"] in names:
        return names[e["kind"]]
    base = f"{e['kind']}{e['microbatch']}"
    return base + (f" chunk {e['chunk']}" if show_chunk else "")


def _slice(e: dict[str, Any], scale: float, show_chunk: bool) -> dict[str, Any]:
    thread = "compute" if e["kind"] in COMPUTE_KINDS else e["kind"].removesuffix("_hidden")
    tid = THREADS.get(thread, THREADS["compute"])[0]
    return {
        "ph": "X",
        "name": _label(e, show_chunk),
        "cat": "compute" if tid == 1 else "comm",
        "pid": e["stage"],
        "tid": tid,
        "ts": e["start"] * scale,
        "dur": (e["end"] - e["start"]) * scale,
        "args": {"microbatch": e.get("microbatch"), "chunk": e.get("chunk")},
    }


def _tp_slices(timeline: dict[str, Any], scale: float) -> list[dict[str, Any]]:
    """TP all-reduces inside each F and B, drawn at the block's end (where Megatron's
    row-parallel linear reduces its partial sums)."""
    out = []
    for e in timeline["events"]:
        tp = tp_time_of(timeline, e["stage"], e["kind"]) if e["kind"] in ("F", "B") else 0.0
        if tp > 0:
            tp = min(tp, e["end"] - e["start"])
            out.append(
                {
                    "ph": "X",
                    "name": f"TP all-reduce ({e['kind']}{e['microbatch']})",
                    "cat": "comm",
                    "pid": e["stage"],
                    "tid": THREADS["tp"][0],
                    "ts": (e["end"] - tp) * scale,
                    "dur": tp * scale,
                }
            )
    return out


def _send_recv(i: int, s: dict[str, Any], hop: float, scale: float) -> list[dict[str, Any]]:
    what = "activations" if s["kind"] == "F" else "gradients"
    name = f"{what} {s['kind']}{s['microbatch']}: stage {s['src_stage']} -> {s['dst_stage']}"
    ts, dur = s["send"] * scale, min(hop, s["recv"] - s["send"]) * scale
    common = {"ph": "X", "name": name, "cat": "pp", "ts": ts, "dur": dur}
    flow = {"name": name, "cat": "pp", "id": i, "ts": ts}
    send_tid, recv_tid = THREADS[f"pp_send_{s['kind']}"][0], THREADS[f"pp_recv_{s['kind']}"][0]
    return [
        {**common, "pid": s["src_stage"], "tid": send_tid},
        {**common, "pid": s["dst_stage"], "tid": recv_tid},
        {**flow, "ph": "s", "pid": s["src_stage"], "tid": send_tid},
        # bp "e": bind the arrow's head to the enclosing recv slice, not the next one.
        {**flow, "ph": "f", "bp": "e", "pid": s["dst_stage"], "tid": recv_tid},
    ]


def _header(view: dict[str, Any]) -> dict[str, Any]:
    """Everything but the events: the units and the query the trace was made from."""
    sc, abstract = view["scenario"], view["timeline"].get("units") == "abstract"
    return {
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": "meshscope",
            "schedule": sc["schedule"],
            "units": "1 abstract unit = 1 ms" if abstract else "seconds",
            "query": view.get("query", {}),
        },
    }


def events(view: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The trace's events one by one, in the order ``build`` lists them, so a caller can
    write them out without holding every event dict at once."""
    tl, sc = view["timeline"], view["scenario"]
    pp, show_chunk = view["layout"]["sizes"]["pp"], view["schedule"]["virtual_stages"] > 1
    abstract = tl.get("units") == "abstract"
    scale = US_PER_UNIT if abstract else US_PER_S
    # The hop is known only in teaching units; otherwise a send is drawn where it starts.
    hop = float(sc.get("p2p_time") or 0.0) if abstract else 0.0
    for stage in range(pp):
        yield _meta(stage, f"pipeline rank {stage}")
        yield from (_meta(stage, label, tid) for tid, label in THREADS.values())
    for e in itertools.chain(tl["events"], tl.get("tail") or []):
        yield _slice(e, scale, show_chunk)
    yield from _tp_slices(tl, scale)
    links = sends(sc["schedule"], tl["events"], pp, sc["virtual_stages"])
    for i, s in enumerate(links):
        yield from _send_recv(i, s, hop, scale)


def build(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` is ``evaluate(scenario)``'s output; returns the trace as a JSON-ready dict."""
    return {"traceEvents": list(events(view)), **_header(view)}


def _dumps(value: Any) -> str:
    # What JSONResponse writes (starlette/responses.py: JSONResponse.render), so the stream
    # and the old one-piece answer are the same bytes.
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def chunks(view: dict[str, Any], per_chunk: int = CHUNK_EVENTS) -> Iterator[bytes]:
    """``build(view)`` as JSON, in pieces of ``per_chunk`` events: the whole trace is never
    one string, and each ``json.dumps`` (which holds the GIL) stays short."""
    header = _dumps(_header(view))
    yield b'{"traceEvents":['
    batch: list[dict[str, Any]] = []
    first = True
    for event in events(view):
        batch.append(event)
        if len(batch) == per_chunk:
            yield ("" if first else ",").encode() + _dumps(batch)[1:-1].encode()
            batch, first = [], False
    if batch:
        yield ("" if first else ",").encode() + _dumps(batch)[1:-1].encode()
    # The header's own braces dropped: its keys follow the event list in the one object.
    yield ("]," + header[1:]).encode()
