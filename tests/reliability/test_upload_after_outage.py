"""The server dies in the middle of a real probe run and is away until the probe has exited
(a short flush timeout): the probe says exactly how many records the server lacks and the
command that sends them; that command (`meshscope upload`) makes the run complete, every
rank-step stored once, and running it again stores nothing."""

import re
import sqlite3
import subprocess
import sys

import pytest
from support import ROOT, ServerProcess, get_json, probe_env, wait_until

pytestmark = pytest.mark.timeout(240)
STEPS, WORLD = 150, 2
RUN = "outage"


def _stored(server) -> int:
    try:
        return sum(p["ranks"] for p in get_json(server.base, f"/api/runs/{RUN}", 2)["trend"])
    except OSError:  # 404 before the hello lands, or the server is down
        return 0


def _rows(db) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        n, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT rank || ':' || step) FROM steps WHERE run = ?",
            (RUN,),
        ).fetchone()
    return n, distinct


def _upload(out, url) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "app.cli", "upload", str(out), "--server", url]
    return subprocess.run(
        cmd, cwd=ROOT, env=probe_env(), capture_output=True, text=True, timeout=90
    )


def test_records_spooled_through_an_outage_are_uploaded_once(tmp_path):
    db, out = tmp_path / "live.sqlite3", tmp_path / "out"
    server = ServerProcess(db).start()
    url = server.ws + "/ws/ingest"
    cmd = [sys.executable, "-m", "gpu_probe", "--pp", "2", "--steps", str(STEPS),
           "--device", "cpu", "--run-name", RUN, "--out", str(out), "--server", url,
           "--report-flush-timeout", "1", "--quiet"]  # fmt: skip
    probe = subprocess.Popen(
        cmd, cwd=ROOT, env=probe_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert wait_until(lambda: _stored(server) >= WORLD, 90, 0.05), "no record arrived"
        server.kill()  # mid-run, and it stays away until the probe has exited
        output, _ = probe.communicate(timeout=120)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait(10)
    assert probe.returncode == 0, output
    said = re.search(r"\[probe\] (\d+) of (\d+) records were not received by the server; "
                     r"send them with: meshscope upload (\S+) --server (\S+)", output)  # fmt: skip
    assert said, output
    unsent, total = int(said[1]), int(said[2])
    # The probe counts what was acked: an ack still in flight when the server died counts as
    # unsent (at-least-once), so every record may be reported unsent; never more than all.
    assert total == WORLD * STEPS and 0 < unsent <= total
    assert (said[3], said[4]) == (str(out), url)

    server.start()  # same port and database: the run it saw before the outage
    try:
        run = get_json(server.base, f"/api/runs/{RUN}")
        # Committed but not acked before the kill: the server may hold a little more.
        assert 0 < run["records"]["unreceived"] <= unsent
        first = _upload(out, url)
        assert first.returncode == 0, first.stdout + first.stderr
        assert f"{run['records']['unreceived']} record(s) sent" in first.stdout
        assert wait_until(lambda: get_json(server.base, f"/api/runs/{RUN}")["status"] == "done")
        run = get_json(server.base, f"/api/runs/{RUN}")
        assert run["records"] == {"expected": total, "received": total, "unreceived": 0}
        assert _rows(db) == (total, total)  # every rank-step, each once

        second = _upload(out, url)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "0 record(s) sent" in second.stdout
        assert _rows(db) == (total, total)  # nothing new
        print(f"\nserver away for the rest of the run: {unsent} of {total} records unsent "
              f"at the probe's exit, 0 lost after the upload")  # fmt: skip
    finally:
        server.stop()
