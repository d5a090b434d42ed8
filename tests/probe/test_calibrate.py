"""`meshscope calibrate --local` on this machine: two real ranks measure, rank 0 writes a
profile that the server's loader accepts, whose figures are positive and bounded, and which
the cost model evaluates a scenario on."""

import json
import subprocess
import sys
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.api.hardware import load_registry
from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario
from app.main import create_app
from app.settings import Settings

pytestmark = [pytest.mark.probe]
NAME = "test-calibrated"


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibrate") / "profile.json"
    cmd = [sys.executable, "-m", "app.cli", "calibrate", "--local", "--ranks", "2", "--quick",
           "--device", "cpu", "--out", str(out), "--name", NAME]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return out, done.stdout


def test_calibrate_writes_a_profile_the_server_registry_loads(calibrated):
    path, stdout = calibrated
    registry = load_registry([path])
    assert list(registry) == [*HARDWARE, NAME]
    spec = registry[NAME]
    assert spec.gpus_per_node == 2 and spec.nvlink_domain == 0
    assert "meshscope calibrate" in spec.source and "cpu/gloo" in spec.source
    assert f"--hardware-profile {path}" in stdout


def test_the_calibrated_figures_are_positive_and_bounded(calibrated):
    spec = load_registry([calibrated[0]])[NAME]
    e = spec.efficiency
    # One CPU core: well under a GPU's peak, memory and links, yet measurably more than 0.
    assert 1e-4 < spec.peak_tflops < 10
    assert 1e-5 < spec.hbm_tbps < 1
    assert 1e-3 < spec.intra_gbps < 1e3 and spec.inter_gbps == spec.intra_gbps
    assert 0 < spec.hbm_gib < 1e4
    assert 0 < e.flash_fraction <= 1 and e.gemm_half_gflop > 0
    # Host time per launch and per message step: microseconds to milliseconds on gloo.
    assert 0 < e.kernel_overhead_us < 1e4
    assert 0 <= e.intra_latency_us < 1e5


def test_the_raw_measurements_are_written_beside_the_profile(calibrated):
    path, _ = calibrated
    raw = json.loads(path.with_name("profile.raw.json").read_text())
    assert raw["world"] == 2 and raw["device"] == "cpu"
    assert {s["op"] for s in raw["intra"]} == {"all_reduce", "all_gather", "p2p"}
    assert all(s["seconds"] > 0 for s in raw["intra"]) and all(g[3] > 0 for g in raw["gemms"])
    # CPU: the block timed between messages, as a step runs it, beside the back-to-back one.
    assert raw["block_in_step"]["seconds"] > 0 and raw["block"]["seconds"] > 0


def test_a_server_built_with_the_profile_evaluates_on_it(calibrated, tmp_path):
    path, _ = calibrated
    settings = Settings(db=tmp_path / "m.sqlite3", ingest_token="t" * 32,
                        hardware_profiles=[path])  # fmt: skip
    with TestClient(create_app(settings)) as client:
        listed = {h["name"]: h for h in client.get("/api/hardware").json()["hardware"]}
        assert listed[NAME]["kind"] == "profile"
    s = Scenario(dp=1, tp=1, pp=2, layers=4, hidden=64, heads=4, seq_len=16, vocab=64,
                 dtype="fp32", hardware=NAME)  # fmt: skip
    view = evaluate(s, load_registry([path]))
    # Launch-bound: the host term alone is 4 layers x 32 launches of a positive overhead.
    assert view["step_time_s"] > 0
    spec = load_registry([path])[NAME]
    assert view["step_time_s"] > 4 * 32 * spec.efficiency.kernel_overhead_us * 1e-6


def test_calibrate_refuses_a_bad_name_before_launching():
    cmd = [sys.executable, "-m", "gpu_probe.calibrate", "--local", "--name", "Bad Name"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--name" in done.stderr
