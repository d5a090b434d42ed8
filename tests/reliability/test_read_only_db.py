"""A database SQLite can only read is served read-only, said so at start, and ingest is
refused with a fatal error frame that stops the producer's retries (issue 26, item 8).
Before, the server started without a word, every hello raised inside the app and closed the
socket with no error frame, and the probe's reporter retried forever.

The file is made read-only with chmod. Root writes through file modes (CAP_DAC_OVERRIDE),
so as root the server runs without that capability (util-linux ``setpriv``): it then meets
the file's mode as any user would. Real processes, loopback only, stopped by their PID."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys

import pytest
from support import ROOT, TOKEN, free_port, get_json, records, run_info, wait_until

from app.core.inputs.protocol import HelloFrame, ProbeRecord
from app.live.store import Store
from gpu_probe.reporter import Reporter, Spool

pytestmark = pytest.mark.timeout(90)
STEPS = 4
DROP_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _finished_run(db) -> None:
    info = run_info("archived", pp=2, steps=STEPS)
    store = Store(db)
    ops = [("hello", (info, rank, 0, 1.0)) for rank in range(2)]
    for step in range(STEPS):
        recs = records(info, step, t0=100.0 + step)
        ops += [("record", (ProbeRecord.model_validate(r), 2.0)) for r in recs]
    store.transaction(ops)
    store.transaction([("status", ("archived", "done", None, "", 3.0))])
    store.close()


def _serve(db, port: int, log) -> subprocess.Popen:
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=TOKEN, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1",
           "--port", str(port), "--db", str(db)]  # fmt: skip
    if os.geteuid() == 0:
        cmd = DROP_OVERRIDE + cmd
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _healthy(base: str) -> bool:
    try:
        return get_json(base, "/healthz", 1)["status"] == "ok"
    except OSError:
        return False


def _modes_bind() -> bool:
    """Whether the server can be made to meet file modes: not root, or root able to drop
    CAP_DAC_OVERRIDE (a container without CAP_SETPCAP cannot)."""
    if os.geteuid() != 0:
        return True
    if shutil.which("setpriv") is None:
        return False
    return subprocess.run([*DROP_OVERRIDE, "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _modes_bind(), reason="root ignores file modes and cannot drop that")
def test_a_read_only_database_is_served_read_only_and_ingest_stops_the_probe(tmp_path):
    db = tmp_path / "archive.sqlite3"
    _finished_run(db)
    db.chmod(0o444)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with open(tmp_path / "server.log", "w") as log:
        server = _serve(db, port, log)
    reporter = None
    try:
        assert wait_until(lambda: _healthy(base) or server.poll() is not None, 30, 0.05)
        assert server.poll() is None, (tmp_path / "server.log").read_text()
        said = (tmp_path / "server.log").read_text()
        assert f"the database {db} is read-only" in said, said  # at start, one line
        # Its runs are served as stored.
        assert get_json(base, "/api/runs/archived")["status"] == "done"
        # A probe is refused for good: a fatal error frame, and its sender stops retrying.
        info = run_info("new-run", pp=1, steps=STEPS)
        hello = HelloFrame(rank=0, attempt=0, info=info)
        spool = Spool(tmp_path / "spool" / "rank-00000.jsonl")
        reporter = Reporter(spool, f"ws://127.0.0.1:{port}/ws/ingest", TOKEN, hello)
        reporter.sender.join(timeout=10)
        assert not reporter.sender.is_alive(), f"still retrying: {reporter.sender.error}"
        assert "read-only" in reporter.sender.error, reporter.sender.error
        assert get_json(base, "/api/runs/archived")["status"] == "done"  # still serving
    finally:
        if reporter is not None:
            reporter.sender.stopping.set()  # the old behaviour's endless retries end here
            reporter.sender.join(timeout=5)
        if server.poll() is None:
            os.kill(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest  # not a byte written
