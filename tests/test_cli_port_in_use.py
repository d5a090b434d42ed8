"""`meshscope serve` on a port something else listens on printed a fresh ingest token (and
how to export it) and only then failed inside uvicorn: the user was told to use a token of
a server that never started. Now it says the port is taken, in one line, and prints no token."""

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_taken_port_is_one_line_and_no_token(tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MESHSCOPE_")}
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port",
             str(port), "--db", str(tmp_path / "x.sqlite3")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "token" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"meshscope: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_a_free_port_is_free():
    from app.cli import _port_taken

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert _port_taken("127.0.0.1", port) is None
    assert _port_taken("127.0.0.1", 0) is None
