"""Flags beyond the correctness matrix: bf16 learns, the collective probe reports every
axis, bad flags fail with the arithmetic, and the loss falls."""

import pytest
from probe_support import TINY, launch, records, step_losses

from app.core.inputs.collective_profile import CollectiveProfile
from gpu_probe.launch import main

pytestmark = [pytest.mark.probe, pytest.mark.timeout(120)]


def test_bf16_training_on_two_stages_drives_the_loss_down(tmp_path):
    args = [
        "--pp", "2", "--schedule", "zb-h1", "--microbatches", "4", "--microbatch-size", "2",
        "--steps", "15", "--lr", "3e-3", "--dtype", "bf16", "--quiet", *TINY,
    ]  # fmt: skip
    run = launch(args, tmp_path)
    assert run.returncode == 0, run.output
    losses = list(step_losses(records(tmp_path)).values())
    assert len(losses) == 15
    assert sum(losses[-3:]) / 3 < losses[0] - 0.8, losses  # ln(64) = 4.16 -> about 2.2


def test_collective_probe_reports_latency_and_bandwidth_per_axis(tmp_path):
    args = ["--dp", "2", "--pp", "2", "--bench-collectives", "--bench-max-bytes", "65536"]
    run = launch(args + ["--quiet"], tmp_path)
    assert run.returncode == 0, run.output
    profile = CollectiveProfile.model_validate_json((tmp_path / "collectives.json").read_text())
    assert [(a.axis, a.op, a.group_size) for a in profile.axes] == [
        ("pp", "send_recv", 2),
        ("dp", "all_reduce", 2),
    ]
    for axis in profile.axes:
        assert [p.bytes for p in axis.points] == [4096, 16384, 65536]
        for p in axis.points:
            assert p.latency_s > 0 and p.algbw_gbps > 0
            factor = 1.0 if axis.op == "send_recv" else 2 * (2 - 1) / 2
            assert p.busbw_gbps == pytest.approx(p.algbw_gbps * factor)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pp", "2", "--layers", "3"], "pp*chunks = 2*1 = 2"),
        (["--schedule", "interleaved", "--pp", "2", "--microbatches", "5"], "2 rounds"),
        (["--tp", "3"], "--heads 4 must be divisible by --tp 3"),
        (["--server", "ws://x"], "--token"),
        (["--run-name", "bad name"], "must match"),
        (["--peak-tflops", "0"], "--peak-tflops must be in"),
    ],
)
def test_impossible_flags_fail_before_any_rank_starts(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("MESHSCOPE_INGEST_TOKEN", raising=False)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
