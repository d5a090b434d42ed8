"""SIGTERM or Ctrl-C (SIGINT) to `meshscope probe`, to the local launcher or to torchrun ends
every rank: within a bounded wait no process of the run is left, the exit code is non-zero,
and the ranks said how many records they left unsent after flushing."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT, TOKEN, ServerProcess, wait_until

pytestmark = pytest.mark.timeout(240)
PROBE = ["--pp", "2", "--steps", "100000", "--device", "cpu", "--collective-timeout", "60"]


def _env() -> dict[str, str]:
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=TOKEN, PYTHONPATH=str(ROOT))
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    return env


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` (from /proc/PID/task/*/children, recursively)."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = list(Path(f"/proc/{p}/task").iterdir())
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                kids = [int(c) for c in (task / "children").read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                continue
            todo += [k for k in kids if k not in found]
            found.update(kids)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _spooled(out: Path, ranks: int, lines: int) -> bool:
    files = sorted(out.glob("rank-*.jsonl"))
    return len(files) == ranks and all(f.read_text().count("\n") >= lines for f in files)


def _stop_and_check(proc, sig, out: Path, ranks: int) -> str:
    try:
        assert wait_until(lambda: _spooled(out, ranks, 3), 120, 0.1), "the run never got going"
        tree = descendants(proc.pid)
        assert len(tree) >= ranks
        sent = time.monotonic()
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=60)
        print(f"\n{signal.Signals(sig).name}: every process gone {time.monotonic() - sent:.1f} s"
              " after the signal")  # fmt: skip
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # its own group (start_new_session)
            proc.wait(10)
    assert proc.returncode != 0, output
    assert wait_until(lambda: not any(_alive(p) for p in tree), 10), [p for p in tree if _alive(p)]
    return output


@pytest.mark.parametrize(
    ("entry", "sig"),
    [(["app.cli", "probe"], signal.SIGTERM), (["gpu_probe"], signal.SIGINT)],
    ids=["meshscope-probe-sigterm", "launcher-sigint"],
)
def test_a_signal_to_the_probe_takes_every_rank_down(tmp_path, entry, sig):
    server = ServerProcess(tmp_path / "live.sqlite3").start()
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", *entry, *PROBE, "--out", str(out), "--quiet",
           "--server", server.ws + "/ws/ingest"]  # fmt: skip
    try:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        )  # fmt: skip
        output = _stop_and_check(proc, sig, out, 2)
    finally:
        server.stop()
    assert proc.returncode == 128 + sig, output
    assert f"stopped by {signal.Signals(sig).name}" in output
    assert output.count("record(s) of this rank unsent") == 2, output  # each rank flushed


@pytest.mark.skipif(shutil.which("torchrun") is None and not (Path(sys.executable).parent /
                    "torchrun").exists(), reason="torchrun not installed")  # fmt: skip
def test_sigterm_to_torchrun_ends_every_worker(tmp_path):
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    server = ServerProcess(tmp_path / "live.sqlite3").start()
    out = tmp_path / "out"
    cmd = [torchrun, "--standalone", "--nproc-per-node", "2", "-m", "gpu_probe", *PROBE,
           "--out", str(out), "--quiet", "--server", server.ws + "/ws/ingest"]  # fmt: skip
    try:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        )  # fmt: skip
        output = _stop_and_check(proc, signal.SIGTERM, out, 2)
    finally:
        server.stop()
    # torchrun forwards SIGTERM to its workers: each flushed and said what stays unsent.
    assert output.count("stopped by SIGTERM: ") == 2, output
