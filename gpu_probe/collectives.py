"""``--bench-collectives``: measure this mesh's real links, nccl-tests style.

Per axis with more than one rank: all-reduce inside every TP group and every DP group, and
send/recv between neighbouring pipeline stages (every stage sends to the next while receiving
from the previous, as in a pipeline's steady state). All groups of an axis run at once, and
each size reports the slowest group. Following nccl-tests (doc/PERFORMANCE.md):

    algbw = bytes / time
    busbw = algbw * 2 (n - 1) / n   for all-reduce (what each link carries in a ring)
    busbw = algbw                   for send/recv
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from app.core.inputs.collective_profile import AxisProfile, CollectiveProfile, LinkPoint
from gpu_probe.calibrate_fit import LINK_OPS
from gpu_probe.mesh import MeshContext

MIN_BYTES = 4 * 1024
MAX_BYTES_GPU = 64 * 1024 * 1024
MAX_BYTES_CPU = 4 * 1024 * 1024  # gloo on 2 shared cores: 64 MB x 8 ranks takes minutes


def sweep(max_bytes: int) -> list[int]:
    """4 KiB, 16 KiB, ... up to ``max_bytes`` (factor 4)."""
    sizes, n = [], MIN_BYTES
    while n <= max_bytes:
        sizes.append(n)
        n *= 4
    return sizes


def bench_collectives(ctx: MeshContext, run: str, max_bytes: int | None) -> CollectiveProfile:
    cuda = ctx.device.type == "cuda"
    cap = max_bytes or (MAX_BYTES_GPU if cuda else MAX_BYTES_CPU)
    warmup, iters = (5, 20) if cuda else (1, 5)
    axes = []
    for axis in ("tp", "pp", "dp"):
        n = ctx.size(axis)
        if n < 2:
            continue  # size-1 axes have no link to measure
        op = "send_recv" if axis == "pp" else "all_reduce"
        times = [_time_op(ctx, axis, nbytes, warmup, iters) for nbytes in sweep(cap)]
        slowest = torch.tensor(times, dtype=torch.float64, device=ctx.device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # every rank is in one group per axis
        factor = 2 * (n - 1) / n if op == "all_reduce" else 1.0
        points = [
            LinkPoint(
                bytes=nbytes,
                latency_s=t,
                algbw_gbps=nbytes / t / 1e9,
                busbw_gbps=nbytes / t / 1e9 * factor,
            )  # fmt: skip
            for nbytes, t in zip(sweep(cap), slowest.tolist(), strict=True)
        ]
        crosses = ctx.layout.crosses_node(axis)
        axes.append(
            AxisProfile(axis=axis, op=op, group_size=n, crosses_node=crosses, points=points)
        )
    backend = dist.get_backend()
    return CollectiveProfile(
        run=run, device="cuda" if cuda else "cpu", backend=str(backend),
        world_size=ctx.layout.world_size, axes=axes,
    )  # fmt: skip


def _time_op(ctx: MeshContext, axis: str, nbytes: int, warmup: int, iters: int) -> float:
    """Mean seconds per operation over ``iters`` back-to-back runs."""
    if axis == "pp":
        tensor = torch.zeros(nbytes // 4, dtype=torch.float32, device=ctx.device)
        recv = torch.empty_like(tensor)

        def run_once() -> None:
            _send_recv(ctx, tensor, recv)
    else:
        run_once = link_op(ctx, axis, "all_reduce", nbytes)

    for _ in range(warmup):
        run_once()
    _sync(ctx)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        run_once()
    _sync(ctx)
    return max((time.perf_counter() - start) / iters, 1e-9)


def _send_recv(ctx: MeshContext, tensor: torch.Tensor, recv: torch.Tensor) -> None:
    stage, pp = ctx.coord.pp, ctx.size("pp")
    ops = []
    if stage + 1 < pp:
        ops.append(dist.P2POp(dist.isend, tensor, ctx.stage_rank(stage + 1)))
    if stage > 0:
        ops.append(dist.P2POp(dist.irecv, recv, ctx.stage_rank(stage - 1)))
    for work in dist.batch_isend_irecv(ops):
        work.wait()


def _sync(ctx: MeshContext) -> None:
    if ctx.device.type == "cuda":
        torch.cuda.synchronize(ctx.device)


# -- one operation on every group of an axis, as ``meshscope calibrate`` times them ----------


def link_op(ctx: MeshContext, axis: str, op: str, nbytes: int) -> Callable[[], object]:
    """A closure running ``op`` of ``nbytes`` fp32 bytes in this rank's ``axis`` group: an
    all-reduce, an all-gather (``nbytes`` is its output) or a p2p ``exchange``."""
    group, n = ctx.group(axis), ctx.size(axis)
    if op == "all_reduce":
        buf = torch.zeros(nbytes // 4, device=ctx.device)
        return lambda: dist.all_reduce(buf, group=group)
    if op == "all_gather":
        out = torch.zeros(nbytes // 4 // n * n, device=ctx.device)
        mine = torch.zeros(nbytes // 4 // n, device=ctx.device)
        # all_gather_single is 2.13's name; older torch (>= 2.6) has only the deprecated one.
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        return lambda: gather(out, mine, group=group)
    if op == "p2p":
        return exchange(ctx, axis, nbytes)
    raise ValueError(f"unknown op {op!r}; one of {LINK_OPS}")


def exchange(ctx: MeshContext, axis: str, nbytes: int) -> Callable[[], None]:
    """Members 2i and 2i+1 of each group swap one message each way at once, posted as one
    batch_isend_irecv, as 1F1B's steady state swaps an activation for a gradient (Megatron's
    send_forward_recv_backward; nccl-tests' sendrecv): one hop's time. An odd last member
    sits out."""
    members = ctx.layout.group(axis, ctx.rank)
    me = members.index(ctx.rank)
    if me ^ 1 >= len(members):
        return lambda: None
    peer = members[me ^ 1]
    out, into = (torch.zeros(nbytes // 4, device=ctx.device) for _ in range(2))

    def swap() -> None:
        ops = [dist.P2POp(dist.isend, out, peer), dist.P2POp(dist.irecv, into, peer)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()

    return swap
