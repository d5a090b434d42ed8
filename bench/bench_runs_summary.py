"""GET /api/runs/{run} at 1M records (not a test): the per-run summaries against counting rows.

Builds a run of 16 ranks x 62,500 steps (dp8 x pp2, 1f1b, m=2: probe-shaped records of
~900 bytes, ~1 GB of SQLite) the fast way, rows inserted in one transaction as an older
release would have left them (no summaries, user_version 0), then opens the store, which
migrates it (timed), and times the route in-process (Starlette's TestClient, the route's
own thread): "before" reads as the previous release did (``Reader.summaries`` off, so every
call counts the rows), "after" reads the summaries. Issue 26 item 10's target: <= 50 ms.

    python bench/bench_runs_summary.py [--steps 62500] [--repeat 5] [--db PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from fastapi.testclient import TestClient  # noqa: E402
from support import records, run_info  # noqa: E402

from app.core.fidelity.measured import breakdown  # noqa: E402
from app.core.inputs.protocol import ProbeRecord  # noqa: E402
from app.live import store_read  # noqa: E402
from app.live.schema import INSERT_STEP, connect  # noqa: E402
from app.live.store import Store  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402

RUN = "long-run"
TARGET_MS = 50.0


def build(path: Path, steps: int) -> int:
    """The run's hello through the store, then every row in one fast transaction."""
    info = run_info(RUN, dp=8, tp=1, pp=2, m=2, steps=steps)
    store = Store(path)
    store.transaction([("hello", (info, rank, 0, 1.0)) for rank in range(info.world_size)])
    store.close()
    template = [ProbeRecord.model_validate(r) for r in records(info, 0, t0=1.0e9)]
    rows = [(r, breakdown(r), r.model_dump_json(exclude_none=True)) for r in template]
    conn = connect(path)
    conn.execute("PRAGMA synchronous=OFF")
    for table in ("rank_summary", "step_summary", "run_summary"):
        conn.execute(f"DROP TABLE {table}")  # as the previous release left a database
    conn.execute("BEGIN")
    for step in range(steps):
        conn.executemany(
            INSERT_STEP,
            [
                (RUN, r.rank, step, 0, 0, 1.0e9 + step, b.step_time_s * (1 + step % 7 / 100),
                 b.compute_s, b.tp_s, b.dp_s, b.pp_wait_s, b.host_s, r.loss, r.mem, 2.0e9, text,
                 b.cp_s, b.ep_s)
                for r, b, text in rows
            ],
        )  # fmt: skip
    conn.execute("PRAGMA user_version = 0")
    conn.execute("COMMIT")
    conn.close()
    return steps * info.world_size


def time_route(client: TestClient, repeat: int) -> tuple[list[float], list[float]]:
    """Wall ms and this process's CPU ms (every thread: the route's and the client's) per
    call; on a shared machine the CPU time is the steadier of the two."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        r = client.get(f"/api/runs/{RUN}")
        wall.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - start_cpu) * 1e3)
        assert r.status_code == 200, r.text
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=62_500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, default=None, help="keep the database here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as tmp:
        path = args.db or Path(tmp) / "runs.sqlite3"
        start = time.perf_counter()
        n = build(path, args.steps)
        print(f"built {n:,} records in {time.perf_counter() - start:.1f} s "
              f"({path.stat().st_size / 2**30:.2f} GiB)")  # fmt: skip
        start = time.perf_counter()
        Store(path).close()  # the writer's start migrates: the summaries filled once
        print(f"migration (summaries from the rows): {time.perf_counter() - start:.1f} s")
        with TestClient(create_app(Settings(db=path)), base_url="http://127.0.0.1") as client:
            client.get(f"/api/runs/{RUN}")  # warm the page cache for both
            counting = store_read.Reader.summaries
            store_read.Reader.summaries = lambda self: False  # the previous release's reads
            try:
                before = time_route(client, args.repeat)
            finally:
                store_read.Reader.summaries = counting
            after = time_route(client, args.repeat)
    print(f"\nGET /api/runs/{{run}} at {n:,} records, median of {args.repeat} (ms)")
    print(f"{'':16}{'before':>10}{'after':>10}{'target':>10}{'speed-up':>10}")
    for i, name in enumerate(("wall", "CPU")):
        b, a = statistics.median(before[i]), statistics.median(after[i])
        met = "met" if a <= TARGET_MS else "NOT met"
        print(f"{name:16}{b:>10.1f}{a:>10.1f}{TARGET_MS:>10.0f}{b / a:>9.0f}x  {met}")


if __name__ == "__main__":
    main()
