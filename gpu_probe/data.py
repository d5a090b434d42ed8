"""Synthetic, learnable, reproducible batches.

Each sequence starts at a random token and follows one fixed random permutation of the
vocabulary (``next = perm[current]``), so a model can drive the loss towards zero. The rule
depends only on the seed and each step's batch only on (seed, step): every rank, every
layout, the single-process reference and a resumed run all see the same global batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gpu_probe.config import ModelConfig


@dataclass(frozen=True)
class StepBatch:
    """One DP shard of one step, cut into microbatches: inputs and next-token targets."""

    tokens: list[torch.Tensor]
    targets: list[torch.Tensor]


def global_batch(m: ModelConfig, seed: int, step: int, sequences: int) -> torch.Tensor:
    """``sequences x (seq_len + 1)`` token ids on CPU."""
    perm = torch.randperm(m.vocab, generator=torch.Generator().manual_seed(seed))
    gen = torch.Generator().manual_seed(seed * 7_919 + step + 1)
    tokens = [torch.randint(m.vocab, (sequences,), generator=gen)]
    for _ in range(m.seq_len):
        tokens.append(perm[tokens[-1]])
    return torch.stack(tokens, dim=1)


def shard_batch(
    m: ModelConfig, seed: int, step: int, dp: int, dp_rank: int, microbatches: int, device
) -> StepBatch:
    """This DP rank's contiguous slice of the global batch, as ``microbatches`` pieces."""
    per_dp = microbatches * m.microbatch_size
    full = global_batch(m, seed, step, dp * per_dp)
    mine = full[dp_rank * per_dp : (dp_rank + 1) * per_dp].to(device)
    pieces = mine.split(m.microbatch_size)
    return StepBatch([p[:, :-1] for p in pieces], [p[:, 1:] for p in pieces])
