"""Synthetic PyTorch profiler (Kineto) traces of a run with context (cp) and expert (ep)
parallelism, one file per rank, as torch.profiler's export_chrome_trace writes them: a
``distributedInfo`` header, ``ProfilerStep#N`` and forward/backward ranges, and c10d's
``record_param_comms`` ops naming each collective and its ``Process Group Ranks``.

The layout is Megatron-LM's (order tp-cp-ep-dp-pp, parallel_state.py): a TP all-reduce in
the forward, a CP all-gather of keys and values (cp_comm_type all_gather), an EP all-to-all
(token dispatch) in the backward, and the gradients reduced over dp x cp. Every rank has the
same clock, so alignment finds no offset. Each step is 8.8 ms: host 0.1 | forward 3 ms
(tp 0.2, cp 0.4 inside) | backward 5 ms (ep 0.6 inside) | host 0.1 | dp 0.6.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from app.core.layout.topology import Layout

STEP_US = 10_000.0
# (name, start, end) in us from the step's start; the collectives' groups come from the layout.
RANGES = (("## forward ##", 100, 3100), ("## backward ##", 3100, 8100))
COMMS = (("allreduce", "tp", 500, 700), ("_allgather_base", "cp", 1000, 1400),
         ("all_to_all", "ep", 4000, 4600), ("allreduce", "dpcp", 8200, 8800))  # fmt: skip
SECONDS = {"tp": 0.0002, "cp": 0.0004, "ep": 0.0006, "dp": 0.0006}  # each a step, each rank


def layout(tp=2, cp=2, dp=2, ep=4, pp=1) -> Layout:
    return Layout(dp=dp, tp=tp, pp=pp, order=("tp", "cp", "ep", "dp", "pp"), cp=cp, ep=ep)


def _group(lay: Layout, axis: str, rank: int) -> list[int]:
    if axis == "dpcp":  # Megatron's data-parallel group with context parallelism
        return sorted({m for c in lay.group("cp", rank) for m in lay.group("dp", c)})
    return lay.group(axis, rank)


def _x(name: str, cat: str, ts: float, dur: float, args: dict | None = None) -> dict:
    event = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
    return event | ({"args": args} if args else {})


def rank_trace(lay: Layout, rank: int, steps: int = 3, extra: tuple = ()) -> dict:
    """One rank's trace; ``extra``: more (op, group, start, end) collectives a step."""
    events = []
    for n in range(steps):
        t0 = 1_000_000.0 + n * STEP_US
        events.append(_x(f"ProfilerStep#{n + 1}", "user_annotation", t0, STEP_US - 50))
        events += [_x(name, "user_annotation", t0 + a, b - a) for name, a, b in RANGES]
        comms = [(op, _group(lay, axis, rank), a, b) for op, axis, a, b in COMMS]
        for op, group, a, b in [*comms, *extra]:
            args = {"Collective name": op, "Process Group Ranks": str(list(group)),
                    "Group size": len(group), "dtype": "BFloat16"}  # fmt: skip
            events.append(_x("record_param_comms", "cpu_op", t0 + a, b - a, args))
    return {
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": lay.world_size},
        "traceEvents": events,
    }


def write(folder: Path, lay: Layout | None = None, **kw) -> Path:
    lay = lay or layout()
    folder.mkdir(parents=True, exist_ok=True)
    for rank in range(lay.world_size):
        text = json.dumps(rank_trace(lay, rank, **kw))
        (folder / f"rank{rank}_trace.json.gz").write_bytes(gzip.compress(text.encode()))
    return folder
