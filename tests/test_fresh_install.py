"""The README as a stranger runs it: the wheel (not editable) into a clean venv, CPU torch
first, then the probe extra; `meshscope serve` and a 2-step `meshscope probe` beside it, and
the run visible on /runs. Nothing from this checkout or the test environment may help: the
venv has no system site-packages and every command runs outside the repository."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from pathlib import Path

import pytest
from wheel_build import build_wheel

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.probe]
TOKEN = "fresh-install-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pip(env_dir: Path, *args: str) -> None:
    proc = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def clean_env(cwd: Path, env_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MESHSCOPE_INGEST_TOKEN"] = TOKEN
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    return env


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def wait_until_up(base: str, server: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stdout.read()
        try:
            get_json(f"{base}/healthz")
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("server did not come up")


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("fresh")
    wheel = build_wheel(tmp)
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    # The README's order: the CPU torch first (here, the build this test runs under).
    pip(env_dir, f"torch=={torch.__version__.split('+')[0]}")
    pip(env_dir, f"{wheel}[probe]")
    return env_dir


@pytest.mark.timeout(1200)
def test_the_wheel_in_a_clean_venv_serves_and_a_probe_run_shows_up_live(fresh_venv, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = clean_env(tmp_path, fresh_venv)
    server = subprocess.Popen(
        ["meshscope", "serve", "--port", str(port), "--db", str(tmp_path / "db.sqlite3")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_until_up(base, server)
        with urllib.request.urlopen(f"{base}/flow", timeout=30) as r:
            assert r.status == 200 and b"<html" in r.read(4096).lower()
        probe = subprocess.run(
            ["meshscope", "probe", "--dp", "2", "--tp", "2", "--pp", "2", "--schedule", "1f1b",
             "--microbatches", "4", "--steps", "2", "--server", f"ws://127.0.0.1:{port}/ws/ingest",
             "--run-name", "fresh"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert probe.returncode == 0, probe.stdout + probe.stderr
        run = get_json(f"{base}/api/runs/fresh")
        assert run["status"] == "done", run
        assert [p["step"] for p in run["trend"]] == [0, 1], run["trend"]
        with urllib.request.urlopen(f"{base}/runs/fresh", timeout=30) as r:
            assert r.status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
    # What a stranger's venv holds: the app, torch's CPU build and numpy; no CUDA stack.
    listed = subprocess.run(
        [str(fresh_venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    names = {p["name"].lower() for p in json.loads(listed)}
    assert {"meshscope", "torch", "numpy"} <= names
    assert not any(n.startswith("nvidia-") for n in names), sorted(names)


def test_the_probe_says_what_to_install_when_torch_or_numpy_is_missing(tmp_path):
    # The server's own environment may lack torch: the CLI answers with the README's commands.
    code = (
        "import importlib.util, sys; real = importlib.util.find_spec;"
        "importlib.util.find_spec = lambda n, *a: None if n == 'numpy' else real(n, *a);"
        "from app.cli import main; sys.exit(main(['probe', '--steps', '1']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "numpy" in proc.stderr and "download.pytorch.org/whl/cpu" in proc.stderr
