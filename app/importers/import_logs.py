"""The log side of ``meshscope import-trace``: torchtitan's structured JSONL, Megatron's and
DeepSpeed's timer lines into the probe's records (app/core/traces/phases.py), with the same
stores and the same all-or-nothing rule as the traces.

The layout: ``--dp --tp --pp --cp --ep --order`` when given; else Megatron's arguments
block (tensor, pipeline, context and expert sizes and world size; its default rank order
tp-cp-ep-dp-pp is meshscope's ``megatron``, tp-pp-dp with ``--use-tp-pp-dp-mapping``). A
timer line holds no collective of its own axis, so a cp or ep run's records carry no cp or
ep events: its layout, grid and coordinates are right, its cp/ep seconds left blank.
torchtitan's logs do not say the layout, nor DeepSpeed's beyond its data-parallel
world_size: without the flags every rank is taken as one data-parallel replica, and the
report says so.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.layout.topology import Layout, parse_order
from app.core.traces import TraceError, find_stragglers
from app.core.traces.phases import PhaseLog, build_phase_run, merge, phase_counts
from app.importers import scenario_link
from app.importers.import_report import Report, line, stragglers
from app.importers.log_files import DEEPSPEED, MEGATRON, read_logs
from app.importers.scenario_link import described

# The frameworks' own rank orders (DeepSpeed's PipeModelDataParallelTopology: tp, dp, pp).
DEFAULT_ORDERS = {MEGATRON: "megatron", "torchtitan": "torchtitan", DEEPSPEED: "deepspeed"}


@dataclass(frozen=True)
class LogImport:
    info: RunInfo
    records: list[ProbeRecord]
    summary: Report


def _layout(args: argparse.Namespace, logs: list[PhaseLog], world: int, fmt: str) -> Layout:
    hints = logs[0].hints
    flags = [getattr(args, a, None) for a in ("dp", "tp", "pp", "cp", "ep")]
    given = any(v is not None for v in flags)
    named = zip(("tp", "pp", "cp", "ep"), flags[1:], strict=True)
    tp, pp, cp, ep = (flag or (1 if given else hints.get(a, 1)) for a, flag in named)
    if not given and hints.get("etp", tp) != tp:  # RunInfo has no etp: Megatron's default only
        raise TraceError(f"{logs[0].name}: expert_tensor_parallel_size {hints['etp']} differs "
                         f"from tensor_model_parallel_size {tp}: not laid out yet")  # fmt: skip
    world = max(world, hints.get("world", 0))
    dp = args.dp or max(world // (tp * pp * cp), 1)
    order = args.order or ("tp-pp-dp" if hints.get("tp_pp_dp") else DEFAULT_ORDERS[fmt])
    try:
        return Layout(dp, tp, pp, parse_order(order), scenario_link.gpus_per_node(args),
                      cp=cp, ep=ep)  # fmt: skip
    except ValueError as err:
        raise TraceError(f"layout: {err}") from err


def prepare_logs(args: argparse.Namespace, paths: list[Path], fmt: str) -> LogImport:
    """Read, merge and convert; TraceError when refused (nothing is stored before)."""
    logs = read_logs(paths, fmt)
    steps = merge(logs)
    world = 1 + max(st.rank for st in steps)
    layout = _layout(args, logs, world, fmt)
    info, records = build_phase_run(steps, layout, args.run, bool(logs[0].hints.get("bf16")))
    first = min(st.step for st in steps)
    ranks = sorted({st.rank for st in steps})
    said = line("log_head", run=info.run, format=fmt, logs=len(logs), ranks=len(ranks),
                records=len(records), layout=described(info), first=first) + line(
        "phases", phases=", ".join(f"{k} {n}" for k, n in sorted(phase_counts(steps).items()))
    )  # fmt: skip
    if fmt != MEGATRON and all(v is None for v in (args.dp, args.tp, args.pp)):
        said += line("no_layout")
    for log in logs:
        for note in log.notes:
            said += line("note", note=note)
    if len(ranks) < layout.world_size:
        said += line("ranks_absent", count=layout.world_size - len(ranks))
    return LogImport(info, records, said + stragglers(find_stragglers(records, layout)))
