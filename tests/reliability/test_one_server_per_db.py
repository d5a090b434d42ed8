"""A second `meshscope serve` on a database another server holds is refused at start (issue
26, item 7): two servers each kept their own liveness, and a run whose ranks reached both
ended "stale" forever. The first holds an advisory lock on ``<db>.lock`` for its lifetime;
the second exits non-zero at once with one line naming the database and the holder. The
lock goes with its holder, even killed with SIGKILL, so a restart is never blocked. Real
processes, loopback only, each stopped by its own PID."""

import os
import signal
import subprocess
import sys
import time

import pytest
from support import ROOT, TOKEN, ServerProcess, free_port, get_json

pytestmark = pytest.mark.timeout(120)


def _second_server(db, timeout_s: float = 30) -> tuple[int, list[str], float]:
    """`meshscope serve` on ``db``: its exit code, its output lines and how long it ran.
    One that keeps running is killed by its PID and reported as exit code None."""
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=TOKEN, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1",
           "--port", str(free_port()), "--db", str(db)]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        code = None
    return code, [line for line in out.splitlines() if line.strip()], time.monotonic() - start


def test_a_second_server_on_the_same_database_exits_at_once_naming_the_holder(tmp_path):
    db = tmp_path / "same.sqlite3"
    first = ServerProcess(db).start()
    try:
        code, lines, took = _second_server(db)
        assert code not in (0, None), (code, lines)
        assert len(lines) == 1, lines  # one clear line, no traceback, no token, no banner
        assert str(db.resolve()) in lines[0] and "in use" in lines[0]
        assert f"pid {first.proc.pid} " in lines[0]  # the holder
        assert f"127.0.0.1:{first.port}" in lines[0]
        assert took < 15, took  # at start: no server came up first
        assert get_json(first.base, "/healthz")["status"] == "ok"  # the first is untouched
        from app.live.db_claim import DatabaseInUse, claim  # after the processes' verdict

        first.kill()  # SIGKILL: no shutdown ran, yet the kernel dropped the lock
        restarted = ServerProcess(db, port=first.port).start()
        try:
            assert get_json(restarted.base, "/healthz")["status"] == "ok"
            with pytest.raises(DatabaseInUse, match=f"pid {restarted.proc.pid} "):
                claim(db)  # this test process is refused too while the server holds it
        finally:
            restarted.stop()
        held = claim(db)  # a clean shutdown released it
        held.release()
    finally:
        first.stop()
