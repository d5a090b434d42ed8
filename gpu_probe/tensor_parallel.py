"""Megatron-style tensor parallelism by hand, with every all-reduce timed on its own.

Shoeybi et al. 2019 (Megatron-LM) §3: an MLP ``Y = GeLU(X A) B`` splits ``A`` by columns and
``B`` by rows, so each of ``t`` ranks computes ``GeLU(X A_i) B_i`` and one all-reduce sums
the partial outputs; attention splits the same way by heads (Q, K, V column-parallel, the
output projection row-parallel). Two conjugate operators carry the communication:

    f = copy_to_tp:     forward identity,    backward all-reduce (before column-parallel)
    g = reduce_from_tp: forward all-reduce,  backward identity   (after row-parallel)

so a block costs two all-reduces in forward and two in backward. With a size-1 group both
are plain identities (no autograd node, no collective), which makes the unsharded
reference model the same code.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from gpu_probe.errors import CommError


class TPComm:
    """One rank's TP group and the timer its all-reduces report to."""

    def __init__(
        self, group: dist.ProcessGroup | None, size: int, rank: int, timer, ranks=()
    ) -> None:
        self.group, self.size, self.rank, self.timer = group, size, rank, timer
        self.ranks = list(ranks)  # global ranks of the group, for error messages

    def all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` in place across the TP group, timed as one ``tp`` event."""
        with self.timer.range(f"tp all_reduce ranks={self.ranks}"):  # names gloo's group
            span = self.timer.start("tp")
            try:
                dist.all_reduce(tensor, group=self.group)
            except RuntimeError as err:
                raise CommError(f"tp all-reduce over ranks {self.ranks} failed: {err}") from err
            self.timer.stop(span)
        return tensor


class _CopyToTP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, comm: TPComm) -> torch.Tensor:
        ctx.comm = comm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        # Each rank holds the gradient from its own column shard; the input's is the sum.
        return ctx.comm.all_reduce(grad.contiguous()), None


class _ReduceFromTP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, comm: TPComm) -> torch.Tensor:
        return comm.all_reduce(x.contiguous())

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        # The sum's gradient w.r.t. each partial output is the output gradient itself.
        return grad, None


def copy_to_tp(x: torch.Tensor, comm: TPComm) -> torch.Tensor:
    return x if comm.group is None else _CopyToTP.apply(x, comm)


def reduce_from_tp(x: torch.Tensor, comm: TPComm) -> torch.Tensor:
    return x if comm.group is None else _ReduceFromTP.apply(x, comm)


class ShardedLinear(nn.Module):
    """``y = x W_i^T`` with this rank's shard ``W_i`` of a full ``(out, in)`` weight.

    ``shard_dim`` 0 = column-parallel (output features split), 1 = row-parallel (input
    features split). No bias: a TP-split bias would need its own reduction, and the tiny
    model does not need one. The communication lives outside, in copy_to_tp /
    reduce_from_tp, so one all-reduce serves Q, K and V together.
    """

    def __init__(self, in_features: int, out_features: int, shard_dim: int, tp: int) -> None:
        super().__init__()
        full = (out_features, in_features)
        if full[shard_dim] % tp:
            raise ValueError(f"dim {shard_dim} of {full} does not split into {tp} TP shards")
        local = list(full)
        local[shard_dim] //= tp
        self.full_shape, self.shard_dim = full, shard_dim
        self.weight = nn.Parameter(torch.empty(local))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight)
