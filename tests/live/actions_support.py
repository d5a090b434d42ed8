"""Helpers of the whole-run action tests and bench/bench_actions.py: a run stored through the
store's own transaction, resumes included, and the phase table computed in plain Python
over SQLite's record JSON, the reference DuckDB's answer is held to."""

from __future__ import annotations

import math
import sqlite3
from collections import defaultdict
from statistics import median

from support import records

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.inputs.protocol_fast import parse_stored_record
from app.live.store import Store


def store_steps(
    store: Store, info: RunInfo, steps: range, attempt: int = 0, slow_rank: int | None = None
) -> None:
    """Every rank's records of ``steps`` (one attempt) in one transaction, as an import does."""
    ops: list[tuple[str, tuple]] = [("hello", (info, 0, attempt, 1.0))]
    for step in steps:
        rows = records(info, step, attempt=attempt, t0=1000.0 + step, slow_rank=slow_rank)
        ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in rows]
    store.transaction(ops)


def current_texts(conn: sqlite3.Connection, run: str, first: int, last: int) -> list[str]:
    rows = conn.execute(
        "SELECT record FROM steps WHERE run = ? AND superseded = 0 AND step BETWEEN ? AND ?",
        (run, first, last),
    )
    return [text for (text,) in rows]


def quantile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default, DuckDB's quantile_cont)."""
    xs = sorted(values)
    at = q * (len(xs) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)


def phase_table_python(texts: list[str]) -> dict[tuple[int, str], dict]:
    """(rank, kind) -> steps, actions, total_s, mean_s, p50_s, p95_s, from record JSON."""
    durations: dict[tuple[int, str], list[float]] = defaultdict(list)
    steps: dict[tuple[int, str], set[int]] = defaultdict(set)
    for text in texts:
        rec = parse_stored_record(text)
        for e in rec.events:
            durations[(rec.rank, e.kind)].append(e.end - e.start)
            steps[(rec.rank, e.kind)].add(rec.step)
    return {
        key: {
            "steps": len(steps[key]),
            "actions": len(ds),
            "total_s": sum(ds),
            "mean_s": sum(ds) / len(ds),
            "p50_s": median(ds),
            "p95_s": quantile(ds, 0.95),
        }  # fmt: skip
        for key, ds in durations.items()
    }
