"""Probe test helpers: launch the probe in a subprocess, read its spool, build the reference.

Each launch runs ``python -m gpu_probe`` in a fresh interpreter (the local launcher forks its
ranks from there), so the pytest process itself can run torch ops for the reference without
ever forking after them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--hidden", "64", "--heads", "4", "--vocab", "64", "--seq-len", "16"]


@dataclass
class Launch:
    returncode: int
    output: str
    seconds: float
    out: Path


def probe_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("RANK", None)  # never let an outer launcher's variables leak in
    env.pop("WORLD_SIZE", None)
    return env


def launch(args: list[str], out: Path, timeout_s: float = 120) -> Launch:
    """Run ``python -m gpu_probe ARGS --out OUT`` and capture everything it prints."""
    cmd = [sys.executable, "-m", "gpu_probe", *args, "--out", str(out)]
    start = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=ROOT, env=probe_env(), capture_output=True, text=True, timeout=timeout_s
    )
    return Launch(proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start, out)


def records(out: Path) -> list[dict]:
    """Every spooled record of a run, all ranks."""
    found = []
    for path in sorted(out.glob("rank-*.jsonl")):
        found += [json.loads(line) for line in path.read_text().splitlines() if line]
    return found


def step_losses(recs: list[dict]) -> dict[int, float]:
    """Mean over DP replicas of the loss (tp shard 0), per step. The rank holding the last
    virtual stage reports it: pp - 1 usually, stage 0 in the V-shaped schedules."""
    by_step: dict[int, list[float]] = {}
    for r in recs:
        if "loss" in r and r["coord"]["tp"] == 0:
            by_step.setdefault(r["step"], []).append(r["loss"])
    return {s: sum(v) / len(v) for s, v in sorted(by_step.items())}


def reference(args: list[str], steps: int):
    """Single-process unsharded training on the same seed and global batch.

    Returns (losses per step, parameters after ``steps`` steps). Naive is forward-only.
    """
    import torch

    from app.core.schedules import FORWARD_ONLY
    from gpu_probe.config import parse_args
    from gpu_probe.data import global_batch
    from gpu_probe.model import GPTChunk, init_parameters, lm_loss
    from gpu_probe.tensor_parallel import TPComm
    from gpu_probe.timing import NullTimer

    cfg = parse_args(args)
    m = cfg.model
    model = GPTChunk(m, 0, 1, TPComm(None, 1, 0, NullTimer()))
    init_parameters(model, m, cfg.seed, 1, 0)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sequences = cfg.dp * cfg.microbatches * m.microbatch_size
    losses = []
    for step in range(steps):
        batch = global_batch(m, cfg.seed, step, sequences)
        loss = lm_loss(model(batch[:, :-1]), batch[:, 1:])
        losses.append(loss.item())
        if cfg.schedule not in FORWARD_ONLY:
            opt.zero_grad()
            loss.backward()
            opt.step()
    return losses, {n: p.detach().clone() for n, p in model.named_parameters()}


def dumped_params(directory: Path) -> list[dict]:
    import torch

    return [torch.load(p) for p in sorted(directory.glob("params-rank*.pt"))]
