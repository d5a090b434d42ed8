"""DualPipe's two copies of the parameters (DeepSeek-V3 §3.2.1): one step's gradients summed.

Rank r holds stage r of the down copy (chunk 0) and stage p-1-r of the up copy (chunk 1);
its partner p-1-r holds the same two stages the other way round. Each copy saw half of the
micro-batches, so the gradient of the step's loss is the sum of the two copies' gradients:
partners swap theirs once, before the DP all-reduce and the optimizer, and both copies take
the same update (dualpipe.py leaves this sync to its caller). The end ranks 0 and p-1 each
hold one copy's losses; the same swap gives both the step's whole loss.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpu_probe.errors import CommError

# Above every pipeline message tag (gpu_probe.p2p.message_tag) of a step the core can build.
COPY_TAG = 2**30


def stage_of(rank: int, chunk: int, pp: int) -> tuple[int, int]:
    """(stage, stages) of one copy that chunk ``chunk`` of pipeline rank ``rank`` holds."""
    return (rank if chunk == 0 else pp - 1 - rank), pp


def sum_copies(chunks, partner: int, losses: list[torch.Tensor]) -> list[torch.Tensor]:
    """Add the partner's gradients of our two stages into ours; return the step's losses
    (both copies') where this rank holds a loss stage, else none."""
    mine = [_grads(chunks[0]), _grads(chunks[1])]
    loss = torch.stack(losses).sum().reshape(1) if losses else torch.zeros(1)
    device = mine[0].device
    send = torch.cat([*mine, loss.to(device, mine[0].dtype)])
    theirs = torch.empty_like(send)
    ops = [
        dist.P2POp(dist.isend, send, partner, tag=COPY_TAG),
        dist.P2POp(dist.irecv, theirs, partner, tag=COPY_TAG),
    ]
    try:
        for work in dist.batch_isend_irecv(ops):
            work.wait()
    except RuntimeError as err:
        raise CommError(f"copy gradient swap with rank {partner} failed: {err}") from err
    # The partner's chunk 1 is our chunk 0's stage and the other way round.
    their_c0, their_c1, their_loss = theirs.split([mine[1].numel(), mine[0].numel(), 1])
    _add(chunks[0], their_c1)
    _add(chunks[1], their_c0)
    if not losses:
        return []
    return [(loss.to(device) + their_loss.to(loss.dtype)).reshape(())]


def _grads(chunk) -> torch.Tensor:
    parts = [
        (p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
        for p in chunk.parameters()
    ]
    return torch.cat(parts)


def _add(chunk, flat: torch.Tensor) -> None:
    params = list(chunk.parameters())
    for p, piece in zip(params, flat.split([p.numel() for p in params]), strict=True):
        p.grad = piece.view_as(p) + (p.grad if p.grad is not None else 0)
