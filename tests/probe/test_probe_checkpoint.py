"""Kill a rank mid-run, relaunch with --resume: every step is reported exactly once and the
final parameters equal those of a run that was never interrupted, bit for bit."""

import pytest
import torch
from probe_support import TINY, dumped_params, launch, records, step_losses

pytestmark = [pytest.mark.probe, pytest.mark.timeout(240)]

STEPS = 6
ARGS = [
    "--dp", "2", "--pp", "2", "--schedule", "1f1b", "--microbatches", "4", "--steps", str(STEPS),
    "--lr", "3e-3", "--checkpoint-every", "2", "--keep-checkpoints", "2", "--quiet",
    "--collective-timeout", "10", *TINY,
]  # fmt: skip


def test_kill_and_resume_loses_nothing_and_matches_an_uninterrupted_run(tmp_path):
    full = launch(
        ARGS + ["--checkpoint-dir", str(tmp_path / "full-ckpt"), "--dump-params",
                str(tmp_path / "full-params")],
        tmp_path / "full",
    )  # fmt: skip
    assert full.returncode == 0, full.output

    ckpt = ["--checkpoint-dir", str(tmp_path / "ckpt")]
    killed = launch(ARGS + ckpt + ["--kill-at", "3:3"], tmp_path / "run")
    assert killed.returncode == 1 and "rank 3 was killed by SIGKILL" in killed.output
    assert (tmp_path / "ckpt" / "step-00000002" / "COMPLETE.json").exists()

    resumed = launch(
        ARGS + ckpt + ["--resume", "--dump-params", str(tmp_path / "params")], tmp_path / "run"
    )
    assert resumed.returncode == 0, resumed.output
    assert "resumed from" in resumed.output and "at step 2" in resumed.output

    recs = records(tmp_path / "run")
    for rank in range(4):
        mine = sorted((r["step"], r["attempt"]) for r in recs if r["rank"] == rank)
        assert [s for s, _ in mine] == list(range(STEPS)), f"rank {rank}: {mine}"
        assert all(a == (0 if s < 2 else 1) for s, a in mine), f"rank {rank}: {mine}"
    assert step_losses(recs) == step_losses(records(tmp_path / "full"))

    for got, want in zip(
        dumped_params(tmp_path / "params"), dumped_params(tmp_path / "full-params"), strict=True
    ):
        assert got["params"].keys() == want["params"].keys()
        for name in want["params"]:
            assert torch.equal(got["params"][name], want["params"][name]), name

    kept = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    assert kept == ["step-00000004", "step-00000006"], kept  # keep the last 2 complete
