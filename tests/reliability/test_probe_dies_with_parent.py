"""Issue 26 item 9: ``kill -9`` of `meshscope probe` runs no handler, yet its launcher and the
launcher's ranks must not train on (each asks for a parent-death signal, gpu_probe.lifeline).
And torchrun stopped by a signal exits 128 + the signal (python -m gpu_probe.torchrun), not 1.

Tiny CPU gloo runs (2 ranks, no server: the spool alone shows they train), bounded waits."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, wait_until
from test_sigterm_probe import _alive, _env, _spooled, descendants

pytestmark = pytest.mark.timeout(180)
PROBE = ["--pp", "2", "--steps", "100000", "--device", "cpu", "--collective-timeout", "60",
         "--quiet"]  # fmt: skip


def _start(cmd: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip


def _reap(proc: subprocess.Popen, tree: set[int]) -> None:
    """What the test started, whatever happened: its group, and any orphan of its tree."""
    for pid in tree | {proc.pid}:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def test_kill_9_of_meshscope_probe_takes_the_launcher_and_ranks_down(tmp_path):
    out = tmp_path / "out"
    proc = _start([sys.executable, "-m", "app.cli", "probe", *PROBE, "--out", str(out)])
    tree: set[int] = set()
    try:
        assert wait_until(lambda: _spooled(out, 2, 3), 120, 0.1), "the run never got going"
        tree = descendants(proc.pid)
        assert len(tree) >= 3  # the launcher and its 2 ranks
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        # SIGTERM from the kernel: the launcher ends its ranks (5 s grace), each flushes.
        gone = wait_until(lambda: not any(_alive(p) for p in tree), 30, 0.1)
        assert gone, f"still training after kill -9: {[p for p in tree if _alive(p)]}"
    finally:
        _reap(proc, tree)


def test_kill_9_of_the_launcher_takes_its_ranks_down(tmp_path):
    # Held before too (torch's mp._wrap asks for SIGINT); now SIGTERM, so each rank flushes.
    out = tmp_path / "out"
    proc = _start([sys.executable, "-m", "gpu_probe", *PROBE, "--out", str(out)])
    tree: set[int] = set()
    try:
        assert wait_until(lambda: _spooled(out, 2, 3), 120, 0.1), "the run never got going"
        tree = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert wait_until(lambda: not any(_alive(p) for p in tree), 30, 0.1)
    finally:
        _reap(proc, tree)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_torchrun_wrapper_exits_128_plus_the_signal(monkeypatch, sig):
    from torch.distributed import run
    from torch.distributed.elastic.multiprocessing.api import SignalException

    from gpu_probe import torchrun

    def stopped(args=None):
        raise SignalException("got a signal", sigval=signal.Signals(sig))

    monkeypatch.setattr(run, "main", stopped)
    assert torchrun.main(["--standalone", "x.py"]) == 128 + sig


@pytest.mark.skipif(shutil.which("torchrun") is None and not (Path(sys.executable).parent /
                    "torchrun").exists(), reason="torchrun not installed")  # fmt: skip
def test_sigterm_to_real_torchrun_through_the_wrapper_exits_143(tmp_path):
    out = tmp_path / "out"
    wrapper = [sys.executable, "-m", "gpu_probe.torchrun", "--standalone", "--nproc-per-node", "2"]
    proc = _start([*wrapper, "-m", "gpu_probe", *PROBE, "--out", str(out)])
    tree: set[int] = set()
    try:
        assert wait_until(lambda: _spooled(out, 2, 3), 120, 0.1), "the run never got going"
        tree = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM, output
        assert "torchrun stopped by SIGTERM" in output
        assert wait_until(lambda: not any(_alive(p) for p in tree), 15, 0.1)
    finally:
        _reap(proc, tree)
