"""`meshscope probe` names itself as typed: its --help said "usage: gpu_probe" and a bad flag
"gpu_probe: --dp must be >= 1", a name the user never typed. `python -m gpu_probe` (and
torchrun -m gpu_probe) keep gpu_probe."""

import subprocess
import sys

import pytest
from probe_support import ROOT, probe_env

pytestmark = [pytest.mark.probe, pytest.mark.timeout(120)]


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=probe_env(),
                          capture_output=True, text=True, timeout=100)  # fmt: skip


def test_meshscope_probe_says_meshscope_probe():
    bad = _run(["-m", "app.cli", "probe", "--dp", "0"])
    assert bad.returncode == 2 and bad.stderr.startswith("meshscope probe: --dp must be >= 1")
    usage = _run(["-m", "app.cli", "probe", "--help"])
    assert usage.returncode == 0 and usage.stdout.startswith("usage: meshscope probe ")
    direct = _run(["-m", "gpu_probe", "--dp", "0"])
    assert direct.returncode == 2 and direct.stderr.startswith("gpu_probe: --dp must be >= 1")
