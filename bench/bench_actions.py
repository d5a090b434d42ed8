"""Whole-run phase table at 1,024 ranks (issue 25: "the views in under 1 s at 1,024 ranks"):
DuckDB over the run's Parquet action segments (app/live/actions_segments.py, cold: with the
catch-up from SQLite; warm: segments there) beside the same table computed in Python over
SQLite's record JSON (protocol_fast.parse_stored_record), side by side in one run, with the
whole-run stragglers' medians and the catch-up's peak RSS (a fresh process doing only the
catch-up). Not a test.

    python bench/bench_actions.py [--ranks 1024] [--steps 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from actions_support import current_texts, phase_table_python  # noqa: E402
from support import records, run_info  # noqa: E402

from app.core.inputs.protocol import ProbeRecord  # noqa: E402
from app.live import actions_query  # noqa: E402
from app.live.actions_segments import Segments  # noqa: E402
from app.live.store import Store  # noqa: E402

TARGET_S = 1.0


def store_run(db: Path, ranks: int, steps: int) -> tuple[str, int]:
    """A run of ``ranks`` ranks (dp x tp 4 x pp 2, 8 microbatches), ``steps`` steps, rank 5
    slow, stored with the store's own transaction, one step per transaction; how many
    actions."""
    info = run_info("bench", dp=ranks // 8, tp=4, pp=2, steps=steps, m=8)
    one = [ProbeRecord.model_validate(r) for r in records(info, 0, t0=1000.0, slow_rank=5)]
    store = Store(db)
    try:
        for step in range(steps):
            ops: list[tuple[str, tuple]] = [("hello", (info, 0, 0, 1.0))]
            for rec in one:
                moved = rec.model_copy(update={"step": step, "t0": 1000.0 + step})
                ops.append(("record", (moved, 2.0)))
            store.transaction(ops)
    finally:
        store.close()
    return info.run, steps * sum(len(r.events) for r in one)


def timed(fn: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def peak_kib() -> int:
    """This process's peak RSS (VmHWM: since its exec, unlike ru_maxrss, which a spawned
    child inherits from the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _catch_up_rss(db: str, folder: str, run: str, out) -> None:
    """In a fresh process: the catch-up alone, and the process's peak RSS before and after."""
    before = peak_kib()
    Segments(Path(db), Path(folder)).query(run, lambda con, files: len(files))
    out.put((before, peak_kib()))


def catch_up_rss(db: Path, folder: Path, run: str) -> tuple[int, int]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_catch_up_rss, args=(str(db), str(folder), run, queue))
    proc.start()
    got = queue.get(timeout=1800)
    proc.join()
    return got


def python_table(db: Path, run: str, last: int) -> dict:
    store = Store(db, readonly=True)
    try:
        return phase_table_python(current_texts(store.conn, run, 0, last))
    finally:
        store.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        start = time.perf_counter()
        run, actions = store_run(db, args.ranks, args.steps)
        took = time.perf_counter() - start
        last = args.steps - 1
        mib = db.stat().st_size / 2**20
        print(f"{args.ranks} ranks x {args.steps} steps: {args.ranks * args.steps:,} records, "
              f"{actions:,} actions, stored in {took:.1f} s, {mib:.0f} MiB")  # fmt: skip
        table = partial(actions_query.phase_table, first=0, last=last)
        medians = partial(actions_query.rank_medians, first=0, last=last)
        rows: dict[str, list[float]] = defaultdict(list)
        for i in range(args.repeat):
            segments = Segments(db, Path(tmp) / f"cold{i}")
            rows["DuckDB, cold (catch-up + query)"].append(timed(segments.query, run, table))
            rows["DuckDB, warm"].append(timed(segments.query, run, table))
            rows["DuckDB, warm: stragglers' medians"].append(timed(segments.query, run, medians))
            rows["Python over SQLite's JSON"].append(timed(python_table, db, run, last))
        python = statistics.median(rows["Python over SQLite's JSON"])
        print(f"\nphase table over steps 0-{last}, median of {args.repeat} "
              f"(target: under {TARGET_S:.0f} s)\n")  # fmt: skip
        print("| how | seconds | vs Python | under 1 s |")
        print("|---|---|---|---|")
        for name, times in rows.items():
            s = statistics.median(times)
            print(f"| {name} | {s:.2f} | x{python / s:.1f} | {'yes' if s < TARGET_S else 'no'} |")
        before, after = catch_up_rss(db, Path(tmp) / "rss", run)
        size = sum(f.stat().st_size for f in (Path(tmp) / "rss" / run).glob("*.parquet"))
        print(f"\ncatch-up in a fresh process: peak RSS {before / 1024:.0f} MiB before, "
              f"{after / 1024:.0f} MiB after; segments {size / 2**20:.1f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
