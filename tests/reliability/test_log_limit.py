"""At the file-descriptor limit the server must not fill the disk (issue 13, item 7):
repeated log lines are rate-limited, connections are capped below the limit (raised to the
hard limit at start), and the log says once, plainly, what is happening."""

import contextlib
import errno
import json
import logging
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support import ROOT, TOKEN, free_port, get_json, wait_until

from app.fd_limit import CAP_MESSAGE, FdBudget, reserve_for
from app.log_limit import Explain, RepeatFilter

pytestmark = pytest.mark.timeout(90)


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _logger(name: str, *filters) -> tuple[logging.Logger, Collect]:
    handler = Collect()
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    for f in filters:
        handler.addFilter(f)
    log = logging.getLogger(f"test.log_limit.{name}")
    log.handlers[:] = [handler]
    log.propagate, log.level = False, logging.DEBUG
    return log, handler


def _fail_accept(log: logging.Logger, n: int) -> None:
    for _ in range(n):  # one call site, as a request failing at EMFILE would be
        try:
            raise OSError(errno.EMFILE, "Too many open files")
        except OSError:
            log.error("Exception in ASGI application", exc_info=True)


def test_the_first_line_passes_then_one_summary_per_interval():
    now = [100.0]
    repeat = RepeatFilter(interval_s=10.0, clock=lambda: now[0])
    log, out = _logger("repeat", repeat)
    _fail_accept(log, 1000)
    assert len(out.lines) == 1 and "Too many open files" in out.lines[0]  # with traceback
    now[0] += 4
    _fail_accept(log, 500)
    assert len(out.lines) == 1 and repeat.held() == 1499
    now[0] += 6  # the interval is over: the next one reports the count, in one line
    _fail_accept(log, 1)
    assert len(out.lines) == 2
    assert out.lines[1] == "ERROR Exception in ASGI application [and 1499 more like this in " \
        "the last 10 s]"  # fmt: skip
    assert repeat.held() == 0
    log.warning("another call site")  # not held back by the first one's run
    for i in range(5):
        log.info("GET /api/runs %d", i)  # one per request by design: never filtered
    assert out.lines[2:] == ["WARNING another call site"] + [
        f"INFO GET /api/runs {i}" for i in range(5)
    ]  # noqa: E501
    now[0] += 60  # quiet for a while: the next one is a fresh first, traceback included
    _fail_accept(log, 1)
    assert "Traceback" in out.lines[-1] and "more like this" not in out.lines[-1]


def test_the_first_cap_line_is_replaced_by_an_explanation_once():
    budget = FdBudget(soft=1024, hard=4096, before=1024, reserve=128, cap=896)
    log, out = _logger("explain", Explain(budget.explanations(10)), RepeatFilter(10.0))
    for _ in range(3):
        log.warning(CAP_MESSAGE)
    assert len(out.lines) == 1
    assert "connection cap reached: 896 connections" in out.lines[0]
    assert "open-file limit 1024 minus 128" in out.lines[0] and "ulimit -n" in out.lines[0]
    log.warning(CAP_MESSAGE + " ")  # a different call site, after the one explanation
    assert out.lines[-1] == "WARNING " + CAP_MESSAGE + " "


def _limited(soft: int, hard: int, *argv: str) -> list[str]:
    """A fresh interpreter started under RLIMIT_NOFILE (soft, hard), then exec'ing argv."""
    code = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
        "os.execv(sys.executable, [sys.executable] + sys.argv[1:])"
    )
    return [sys.executable, "-c", code, *argv]


def test_the_soft_limit_is_raised_to_the_hard_one_and_the_cap_follows():
    show = "import json; from app.fd_limit import fd_budget; print(json.dumps(vars(fd_budget())))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(_limited(256, 1000, "-c", show), cwd=ROOT, env=env, timeout=30,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    budget = json.loads(out)
    assert (budget["before"], budget["soft"], budget["hard"]) == (256, 1000, 1000)
    assert budget["reserve"] == reserve_for(1000) == 125
    assert budget["cap"] == 1000 - 125


def test_serve_caps_connections_and_logs_the_cause_once_without_flooding(tmp_path):
    """`meshscope serve` under a 128-descriptor limit: 200 sockets go past the cap (64) and
    past the limit itself; every request then gets a prompt answer, 503 at the cap (the
    server before issue 13 left them hanging and logged ~100 MB in 15 s), the log explains
    once and stays small, and the server serves again once the sockets close. Each sends a
    whole head and holds its body back, so the cap is reached: connections that only wait
    are closed to make room since issue 26 (tests/reliability/test_slowloris.py)."""
    port, err = free_port(), tmp_path / "stderr.log"
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=TOKEN, PYTHONPATH=str(ROOT))
    argv = _limited(100, 128, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port",
                    str(port), "--db", str(tmp_path / "m.sqlite3"))  # fmt: skip
    with open(err, "wb") as stderr:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr)
    base, idle = f"http://127.0.0.1:{port}", []
    try:
        assert wait_until(lambda: _status(base) == 200, 30, 0.05)
        limits = Path(f"/proc/{proc.pid}/limits").read_text().splitlines()
        line = next(x for x in limits if x.startswith("Max open files"))
        assert line.split()[3:5] == ["128", "128"]  # soft raised from 100 to the hard limit
        for _ in range(200):  # the kernel queues what the server has not accepted yet
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            with contextlib.suppress(OSError):  # refused over the cap already
                idle[-1].sendall(HEAD_ONLY)
        statuses = [_status(base) for _ in range(100)]
        # Each answered at once: 503 at the cap, or 200 once connections that only wait (a
        # 503 already sent, the next head not begun) were closed to make room (issue 26).
        # Which comes first is a race between those closes and this request, so the cap is
        # shown reached by the log below (once), not by the first status.
        assert set(statuses) <= {200, 503}, statuses  # none hung or refused (0)
        for s in idle:
            s.close()
        idle.clear()
        assert wait_until(lambda: _status(base) == 200, 10, 0.05)
        assert get_json(base, "/healthz") == {"status": "ok"}
    finally:
        for s in idle:
            s.close()
        proc.terminate()
        stdout = proc.communicate(timeout=15)[0].decode()
    assert "open-file limit 128 (was 100, hard 128); at most 64 connections at once" in stdout
    log = err.read_text()
    assert log.count("connection cap reached: 64 connections are open") == 1, log
    assert log.count("out of file descriptors (limit 128)") <= 1, log
    assert log.count(CAP_MESSAGE) <= 2  # one summary per 10 s interval at most
    assert len(log) < 8_000, len(log)


# A request inside the server's bounds (a body within the cap and, by default, 10 s to come).
HEAD_ONLY = (b"POST /api/hardware/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")  # fmt: skip


def _status(base: str) -> int:
    try:
        with urllib.request.urlopen(base + "/api/runs", timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0
