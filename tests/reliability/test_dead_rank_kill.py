"""kill -9 one rank of a real probe run: its socket closes at once, and the server marks that
rank dead and the run failed within a few seconds (it took 15 s before), well before the
surviving rank's collective timeout. The seconds it took are printed (run with -s)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT, ServerProcess, get_json, probe_env, wait_until

pytestmark = pytest.mark.timeout(180)
RUN = "killed"


def children(pid: int) -> list[int]:
    """The launcher's rank processes, in fork (= rank) order."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return sorted(found)


def _run(server) -> dict | None:
    try:
        return get_json(server.base, f"/api/runs/{RUN}", 2)
    except OSError:
        return None


def test_a_killed_rank_is_dead_and_the_run_failed_within_seconds(tmp_path):
    server = ServerProcess(tmp_path / "live.sqlite3").start()
    cmd = [sys.executable, "-m", "gpu_probe", "--pp", "2", "--steps", "100000",
           "--device", "cpu", "--run-name", RUN, "--out", str(tmp_path / "out"),
           "--server", server.ws + "/ws/ingest", "--collective-timeout", "60",
           "--quiet"]  # fmt: skip
    probe = subprocess.Popen(
        cmd, cwd=ROOT, env=probe_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        running = lambda: (r := _run(server)) is not None and len(r["trend"]) >= 3  # noqa: E731
        assert wait_until(running, 90, 0.05), "the run never got going"
        ranks = children(probe.pid)
        assert len(ranks) == 2
        os.kill(ranks[1], signal.SIGKILL)
        killed_at = time.monotonic()
        # 8 s: loose (the target is 2 s, printed below) yet far under the old 15 s.
        failed = lambda: (r := _run(server)) is not None and r["status"] == "failed"  # noqa: E731
        assert wait_until(failed, 8, 0.02), _run(server)
        seen_s = time.monotonic() - killed_at
        run = _run(server)
        assert run["ranks"][1]["state"] == "dead"
        assert "rank(s) 1" in run["reason"] or "rank(s) 0, 1" in run["reason"]
        print(f"\nkilled rank seen dead, run failed after {seen_s:.2f} s")
    finally:
        if probe.poll() is None:
            probe.send_signal(signal.SIGTERM)
            try:
                probe.wait(20)
            except subprocess.TimeoutExpired:
                probe.kill()
                probe.wait(10)
        server.stop()
