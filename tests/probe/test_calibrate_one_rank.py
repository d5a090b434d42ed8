"""`meshscope calibrate --ranks 1 --links-from PRESET`: one GPU alone measures its compute,
memory and floor, and takes its links and node shape from the named preset (a rank with no
peer has no link to time); the floor measured on CUDA reaches the profile."""

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from app.core.inputs.hardware import HARDWARE
from gpu_probe.calibrate_fit import LinkSample
from gpu_probe.calibrate_profile import (
    AttentionTiming,
    BlockTiming,
    Measurements,
    OptimizerTiming,
    spec_from,
)

pytestmark = [pytest.mark.probe]
H100 = HARDWARE["h100-sxm"]


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibrate1") / "one.json"
    cmd = [sys.executable, "-m", "app.cli", "calibrate", "--local", "--ranks", "1", "--quick",
           "--device", "cpu", "--links-from", "h100-sxm", "--out", str(out),
           "--name", "one"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(out.read_text())


def test_one_rank_takes_the_presets_links_and_node(one_rank):
    e = H100.efficiency
    assert one_rank["intra_gbps"] == pytest.approx(H100.intra_gbps * e.intra_busbw_fraction)
    assert one_rank["inter_gbps"] == pytest.approx(H100.inter_gbps * e.inter_busbw_fraction)
    assert one_rank["gpus_per_node"] == H100.gpus_per_node
    assert one_rank["efficiency"]["intra_latency_us"] == pytest.approx(e.intra_latency_us)
    assert "h100-sxm preset" in one_rank["source"]


def test_one_rank_still_measures_its_own_compute(one_rank):
    # A CPU core is nowhere near an H100: the compute figures are this machine's, not copied.
    assert 0 < one_rank["peak_tflops"] < H100.peak_tflops / 10
    assert one_rank["memory_floor_gib"] == 0.0  # CPU: no device floor to read


def test_one_rank_without_links_from_is_refused_before_launching():
    cmd = [sys.executable, "-m", "gpu_probe.calibrate", "--local", "--ranks", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--links-from" in done.stderr


def _measured(floor_gib: float | None) -> Measurements:
    gemms = tuple((n, n, n, 2.0 * n**3 / 100e12 + 5e-6) for n in (256, 1024, 4096, 8192))
    return Measurements(
        host="h", date="2026-12-05", device="cuda", backend="nccl", dtype="bf16", world=2,
        ranks_per_node=2, memory_gib=79.1, gemms=gemms, stream_bytes=8e9, stream_s=3e-3,
        attention=AttentionTiming(1024, 16, 2048, 2e-4), block=BlockTiming(1024, 16, 512, 2e-3),
        intra=(LinkSample("all_reduce", 2, 1e6, 2e-5), LinkSample("all_reduce", 2, 1e8, 6e-4),
               LinkSample("all_gather", 2, 1e8, 3e-4)),
        optimizer=OptimizerTiming(10_000_000, 20, 1e-3), floor_gib=floor_gib,
    )  # fmt: skip


def test_the_measured_floor_becomes_the_profiles_floor():
    assert spec_from(_measured(1.37), "x").memory_floor_gib == pytest.approx(1.37)
    assert spec_from(_measured(None), "x").memory_floor_gib == 0.0
    assert "floor 1.37 GiB" in spec_from(_measured(1.37), "x").source


def test_measured_links_are_kept_when_there_are_any():
    spec = spec_from(replace(_measured(None), links_from="h100-sxm"), "x")
    assert spec.gpus_per_node == 2  # what ran, not the preset's node
