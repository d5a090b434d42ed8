"""Checkpoints with torch.distributed.checkpoint: complete-only, keep the last k.

Layout on disk: ``<dir>/step-00000004/`` holds one DCP checkpoint taken after step 3, so
"resume from it" means "the next step to run is 4". DCP writes every rank's shard and the
coordinator writes ``.metadata`` last; ``dcp.save`` returns on rank 0 only after that, and
only then does rank 0 write ``COMPLETE.json``. A directory without the marker is a save that
was interrupted and never counts.

Keys are the unsharded parameter names plus the TP shard index (``model.tp1.blocks.3.fc1
.weight``), identical on every DP replica (DCP writes one copy) and independent of how the
blocks are cut into pipeline chunks, so a resume may even change pp or dp; tp and the model
shape must match, and the marker's metadata is checked first to say so plainly.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist

from gpu_probe.model import shard_dims

MARKER = "COMPLETE.json"


class CheckpointError(RuntimeError):
    pass


class Checkpointer:
    def __init__(self, root: str, every: int, keep: int, rank: int, tp_rank: int, meta: dict):
        self.root, self.every, self.keep = Path(root), every, keep
        self.rank, self.tp_rank, self.meta = rank, tp_rank, meta

    def due(self, next_step: int) -> bool:
        return self.every > 0 and next_step % self.every == 0

    def save(self, next_step: int, params: dict[str, torch.Tensor], optimizer) -> Path:
        """Collective: every rank calls it after the same step."""
        import torch.distributed.checkpoint as dcp  # ~1 s to import: only runs that checkpoint

        path = self.root / f"step-{next_step:08d}"
        dcp.save(self._state(params, optimizer, create=False), checkpoint_id=str(path))
        if self.rank == 0:
            _write_atomic(path / MARKER, {"step": next_step, "meta": self.meta})
            self._prune()
        return path

    def latest(self) -> tuple[int, Path] | None:
        """The newest complete checkpoint, as rank 0 sees it, agreed by every rank."""
        found = [_latest_complete(self.root) if self.rank == 0 else None]
        dist.broadcast_object_list(found, src=0)
        return found[0]

    def load(self, path: Path, params: dict[str, torch.Tensor], optimizer) -> int:
        marker = json.loads((path / MARKER).read_text())
        mismatch = {
            k: (marker["meta"].get(k), v)
            for k, v in self.meta.items()
            if marker["meta"].get(k) != v
        }
        if mismatch:
            raise CheckpointError(
                f"{path} was written by a different setup; (saved, now): {mismatch}"
            )
        import torch.distributed.checkpoint as dcp

        dcp.load(self._state(params, optimizer, create=True), checkpoint_id=str(path))
        return int(marker["step"])

    def _state(self, params: dict[str, torch.Tensor], optimizer, create: bool) -> dict:
        """Flat DCP state dict; ``create`` makes empty AdamW state to load into."""
        state: dict[str, torch.Tensor] = {}
        for name, param in params.items():
            key = f"tp{self.tp_rank}.{name}"
            state[f"model.{key}"] = param
            slots = optimizer.state[param]
            if create and not slots:
                # What AdamW's own first step creates (non-fused, non-capturable).
                slots["step"] = torch.tensor(0.0, dtype=torch.float32)
                slots["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                slots["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
            for slot, value in slots.items():
                state[f"optim.{key}.{slot}"] = value
        return state

    def _prune(self) -> None:
        complete = _complete_steps(self.root)
        keep = {step for step, _ in complete[-self.keep :]}
        newest = complete[-1][0] if complete else -1
        for path in self.root.glob("step-*"):
            step = _step_of(path)
            done = (path / MARKER).exists()
            # Drop complete ones beyond the last k, and interrupted saves older than the newest.
            if step is not None and ((done and step not in keep) or (not done and step < newest)):
                shutil.rmtree(path, ignore_errors=True)


def _step_of(path: Path) -> int | None:
    try:
        return int(path.name.removeprefix("step-"))
    except ValueError:
        return None


def _complete_steps(root: Path) -> list[tuple[int, Path]]:
    found = [(_step_of(p), p) for p in root.glob("step-*") if (p / MARKER).exists()]
    return sorted((s, p) for s, p in found if s is not None)


def _latest_complete(root: Path) -> tuple[int, Path] | None:
    complete = _complete_steps(root) if root.exists() else []
    return complete[-1] if complete else None


def _write_atomic(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, sort_keys=True))
    os.replace(tmp, path)


def dump_params(directory: Path, ctx, params: dict, chunks: list) -> None:
    """--dump-params: this rank's parameters and their TP shard dims, for the tests that
    compare them with a single-process reference."""
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "coord": asdict(ctx.coord),
        "params": {n: p.detach().cpu().clone() for n, p in params.items()},
        "shard_dims": {n: d for c in chunks for n, d in shard_dims(c).items()},
    }
    torch.save(payload, directory / f"params-rank{ctx.rank:05d}.pt")
