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

import torch
import torch.distributed as dist

from app.core.protocol import AxisProfile, CollectiveProfile, LinkPoint
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
    tensor = torch.zeros(nbytes // 4, dtype=torch.float32, device=ctx.device)
    recv = torch.empty_like(tensor)

    def run_once() -> None:
        if axis == "pp":
            _send_recv(ctx, tensor, recv)
        else:
            dist.all_reduce(tensor, group=ctx.group(axis))

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
