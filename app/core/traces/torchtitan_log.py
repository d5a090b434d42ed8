"""torchtitan's structured JSONL (one file per rank,
``structured_logs/{source}.global_rank_{rank}.{timestamp}-{random}.jsonl``) -> PhaseLog.

The format (torchtitan/observability/structured_logger/jsonl_handler.py,
``TraceJsonlFormatter._log_dict``): one JSON object a line with ``rank``/``global_rank``,
``source``, ``step``, ``log_type_name``, ``time_us``, ``task_name``, ``value``, ... A span
(``log_trace_span``) is a ``NAME_start`` and a ``NAME_end`` record, paired last-in first-out
per ``task_name`` (structured_logging.py, ``log_trace_span``'s docstring). The trainer
(torchtitan/trainer.py) wraps each step in ``step`` and inside it ``fetching_batch``,
``fwd_bwd`` and ``optim``; ``checkpoint_save`` and ``eval`` when they run.

Stored: ``optim`` as the probe's ``optim``. Not stored (host time, counted): ``fwd_bwd``
holds forward, backward and, under pipeline parallelism, the schedule's sends and waits in
one span, so neither F nor B can be told from it; data loading and the rest have no kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from app.core.traces.phases import Phase, PhaseLog, PhaseStep
from app.core.traces.spans import TraceError

KINDS = {"optim": "optim"}  # torchtitan span name -> probe kind; every other is host time
FILE_RANK = re.compile(r"\.global_rank_(\d+)\.")


def _record(line: str, n: int, name: str) -> dict | None:
    if not line.strip():
        return None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as err:
        raise TraceError(f"{name}: line {n} is not JSON ({err.msg}): a truncated file?") from err
    if not isinstance(rec, dict) or not isinstance(rec.get("log_type_name"), str):
        raise TraceError(f"{name}: line {n} has no log_type_name: not a torchtitan structured log")
    if type(rec.get("time_us")) is not int or type(_rank(rec)) is not int:
        raise TraceError(f"{name}: line {n} has no integer time_us and rank")
    return rec


def _rank(rec: dict) -> object:
    return rec.get("global_rank", rec.get("rank"))


class _Spans:
    """Pairs NAME_start with NAME_end, last-in first-out per task_name."""

    def __init__(self) -> None:
        self.open: dict[object, list[tuple[str, int, object]]] = {}
        self.closed: list[tuple[str, int, int, object]] = []  # (name, start_us, end_us, step)

    def add(self, rec: dict) -> None:
        kind, task = rec["log_type_name"], rec.get("task_name")
        stack = self.open.setdefault(task, [])
        if kind.endswith("_start"):
            stack.append((kind[: -len("_start")], rec["time_us"], rec.get("step")))
        elif kind.endswith("_end"):
            base = kind[: -len("_end")]
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] == base:
                    name, start, step = stack.pop(i)
                    self.closed.append((name, start, rec["time_us"], step))
                    break


def parse_lines(lines: Iterable[str], name: str) -> PhaseLog:
    """One rank's file; TraceError naming ``name`` for a line that is not a record, two
    ranks or sources in one file, or a rank other than the file name's."""
    spans, rank, source = _Spans(), None, None
    for n, line in enumerate(lines, 1):
        rec = _record(line, n, name)
        if rec is None:
            continue
        if rank is None:
            rank, source = _rank(rec), rec.get("source")
        elif (_rank(rec), rec.get("source")) != (rank, source):
            raise TraceError(f"{name}: line {n} is rank {_rank(rec)} of {rec.get('source')!r}, "
                             f"but the file began with rank {rank} of {source!r}")  # fmt: skip
        spans.add(rec)
    if rank is None:
        raise TraceError(f"{name}: is empty: not a torchtitan structured log")
    named = FILE_RANK.search(name)
    if named and int(named[1]) != rank:
        raise TraceError(f"{name}: the file is named rank {named[1]} but its records say {rank}")
    steps, open_steps = _steps(spans, rank)
    notes = tuple(f"rank {rank} step {s}: no step_end (the run stopped in it), left out"
                  for s in open_steps)  # fmt: skip
    return PhaseLog(name, "torchtitan", tuple(steps), run_key=str(source), notes=notes)


def _steps(spans: _Spans, rank: int) -> tuple[list[PhaseStep], list[object]]:
    extent = {step: (a, b) for n, a, b, step in spans.closed if n == "step" and type(step) is int}
    out = []
    for step, (a, b) in sorted(extent.items()):
        phases = tuple(
            Phase(n, KINDS.get(n), (s - a) / 1e6, (e - a) / 1e6)
            for n, s, e, st in sorted(spans.closed, key=lambda c: c[1])
            if st == step and n != "step" and a <= s <= b
        )
        out.append(PhaseStep(rank, step, a / 1e6, phases))
    unclosed = [st for stack in spans.open.values() for n, _, st in stack if n == "step"]
    return out, unclosed
