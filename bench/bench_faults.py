"""Fault benchmark (not a test): issue 13's four figures from one run, printed together.

    python bench/bench_faults.py [--outage-s 30] [--steps 240]

1. A real probe run (pp=2, CPU, gloo, default flush timeout) whose server is killed -9 once
   records flow and stays away ``--outage-s`` seconds; then it comes back on the same port and
   database, the probe's own printed ``meshscope upload`` command is run if it printed one,
   and the distinct rank-steps stored are counted against those the run made (lost = 0).
2. kill -9 of one rank of a running probe: seconds until the server shows the run failed.
3. /healthz p99 and server peak RSS while the heaviest allowed requests run
   (bench/bench_heavy.py's mixed set).

Servers listen on 127.0.0.1; every process started here is stopped by its own PID.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "live"), str(ROOT / "bench")]

import bench_heavy  # noqa: E402
from support import ServerProcess, get_json, probe_env, wait_until  # noqa: E402

UPLOAD = re.compile(r"send them with: (meshscope upload \S+ --server \S+)")


def _probe(server: ServerProcess, run: str, out: Path, steps: int, *extra: str):
    cmd = [sys.executable, "-m", "gpu_probe", "--pp", "2", "--steps", str(steps),
           "--device", "cpu", "--run-name", run, "--out", str(out),
           "--server", server.ws + "/ws/ingest", "--quiet", *extra]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=probe_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip


def _run(server: ServerProcess, run: str) -> dict | None:
    try:
        return get_json(server.base, f"/api/runs/{run}", 2)
    except OSError:
        return None


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def outage(tmp: Path, outage_s: float, steps: int) -> tuple[int, int, bool]:
    """(rank-steps lost, rank-steps made, whether the probe asked for an upload)."""
    db, out, run = tmp / "outage.sqlite3", tmp / "outage", "outage"
    server = ServerProcess(db).start()
    probe = _probe(server, run, out, steps)
    try:
        started = lambda: (r := _run(server, run)) is not None and len(r["trend"]) >= 2  # noqa: E731
        if not wait_until(started, 120, 0.05):
            raise RuntimeError("no record arrived")
        server.kill()
        time.sleep(outage_s)
        server.start()
        output, _ = probe.communicate(timeout=600)
        said = UPLOAD.search(output)
        if said:
            cmd = [sys.executable, "-m", "app.cli", *said[1].split()[1:]]
            subprocess.run(cmd, cwd=ROOT, env=probe_env(), capture_output=True, timeout=120)
        with sqlite3.connect(db) as conn:
            (stored,) = conn.execute(
                "SELECT COUNT(DISTINCT rank || ':' || step) FROM steps WHERE run = ?", (run,)
            ).fetchone()
        return 2 * steps - stored, 2 * steps, bool(said)
    finally:
        _stop(probe)
        server.stop()


def killed_rank(tmp: Path) -> float:
    """Seconds from kill -9 of rank 1 until the server shows the run failed."""
    server, run = ServerProcess(tmp / "killed.sqlite3").start(), "killed"
    probe = _probe(server, run, tmp / "killed", 100_000, "--collective-timeout", "60")
    try:
        running = lambda: (r := _run(server, run)) is not None and len(r["trend"]) >= 3  # noqa: E731
        if not wait_until(running, 120, 0.05):
            raise RuntimeError("the run never got going")
        ranks = sorted(
            int(c)
            for task in Path(f"/proc/{probe.pid}/task").iterdir()
            for c in (task / "children").read_text().split()
        )
        os.kill(ranks[1], signal.SIGKILL)
        t0 = time.monotonic()
        failed = lambda: (r := _run(server, run)) is not None and r["status"] == "failed"  # noqa: E731
        wait_until(failed, 60, 0.01)
        return time.monotonic() - t0
    finally:
        _stop(probe)
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outage-s", type=float, default=30.0)
    ap.add_argument("--steps", type=int, default=240)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lost, made, uploaded = outage(Path(tmp), args.outage_s, args.steps)
        seen_s = killed_rank(Path(tmp))
        server = bench_heavy.Server(Path(tmp) / "heavy.sqlite3")
        try:
            heavy = bench_heavy.run_mix(server, "mixed", 2.0)
        finally:
            server.stop()
    print("\n== faults (one run)")
    how = "after the probe's printed upload" if uploaded else "(no upload asked for)"
    print(f"rank-steps lost across a {args.outage_s:.0f} s outage: {lost} of {made} {how}")
    print(f"seconds to see a killed rank (run failed):  {seen_s:.2f}")
    print(f"/healthz p99 under heavy requests:           {heavy['healthz_p99_ms']:.1f} ms")
    print(f"server peak RSS under heavy requests:        {heavy['peak_rss_mb']:.0f} MB")
    print("targets: 0 lost; <= 2 s; <= 50 ms; <= 1024 MB")


if __name__ == "__main__":
    main()
