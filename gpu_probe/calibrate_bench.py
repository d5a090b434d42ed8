"""The measurements behind ``meshscope calibrate``, on every rank at once.

Every rank measures at the same time as the others, as in a training step: on a GPU node
that includes shared power and PCIe, on a CPU box ranks sharing cores and memory. Each
figure is the slowest rank's (as --bench-collectives reports the slowest group).

Timing: ``per_call_s`` runs an op twice to warm up, sizes a repeat to at least
``repeat_ms`` of back-to-back calls, and takes the median of ``repeats`` repeats: many
short repeats, so one that lost its core to another process is an outlier the median
drops. The clock is a pair of CUDA events on the current stream on GPU (one synchronisation
per repeat); on CPU the thread's CPU time for computations and ``perf_counter`` for links.
Collectives agree on one call count across ranks and start each repeat from a barrier.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gpu_probe.calibrate_clock import Budget, calls_for, one_call_s, per_call_s, repeat_s
from gpu_probe.calibrate_clock import budget as budget  # calibrate.py reads it here
from gpu_probe.calibrate_fit import LinkSample
from gpu_probe.calibrate_profile import AttentionTiming, BlockTiming, OptimizerTiming
from gpu_probe.collectives import LINK_OPS, link_op, sweep
from gpu_probe.config import ModelConfig
from gpu_probe.mesh import MeshContext
from gpu_probe.model import Block, init_parameters
from gpu_probe.tensor_parallel import TPComm
from gpu_probe.timing import NullTimer

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# A block small enough that its kernels do next to nothing: what is left is launching them.
OVERHEAD_BLOCK = {"cpu": (32, 2, 8), "cuda": (64, 4, 16)}  # hidden, heads, seq_len
ATTENTION = {"cpu": (256, 4, 512), "cuda": (2048, 16, 4096)}  # hidden, heads, seq_len
STREAM_ELEMENTS = {"cpu": 16 << 20, "cuda": 256 << 20}  # fp32 elements per operand
WORK_CALLS = 5  # operations per repeat when each follows a block of compute
# Block timings taken between messages of at most this (a probe step's messages are KiBs).
IN_STEP_MAX_BYTES = 1 << 20


def slowest(values: list[float]) -> list[float]:
    """Each value's maximum over all ranks (CPU tensor: gloo serves it on every backend)."""
    t = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


# -- compute -------------------------------------------------------------------------------


def gemm_shapes(gemm_max: int) -> list[tuple[int, int, int]]:
    """(m, n, k) from 16 up to ``gemm_max``: square, an MLP's (s, 4s, s), and 16-token
    micro-batches against s x s weights (the probe's own shapes are of this kind)."""
    sizes = [16 << i for i in range(12) if 16 << i <= gemm_max]
    shapes = [(s, s, s) for s in sizes] + [(s, 4 * s, s) for s in sizes]
    return shapes + [(16, s, s) for s in sizes if s > 16]


def time_gemms(
    ctx: MeshContext, dtype: torch.dtype, b: Budget
) -> list[tuple[int, int, int, float]]:
    out = []
    for m, n, k in gemm_shapes(b.gemm_max):
        a = torch.randn(m, k, dtype=dtype, device=ctx.device)
        w = torch.randn(k, n, dtype=dtype, device=ctx.device)
        out.append(per_call_s(lambda a=a, w=w: torch.mm(a, w), ctx.device, b))
    dist.barrier()
    times = slowest(out)
    return [(m, n, k, t) for (m, n, k), t in zip(gemm_shapes(b.gemm_max), times, strict=True)]


def time_stream(ctx: MeshContext, b: Budget) -> tuple[float, float]:
    """(bytes, seconds) of c = a + b over operands far larger than any cache: two reads and
    one write, counted as compute.hbm_seconds counts a kernel's bytes (read plus written)."""
    n = STREAM_ELEMENTS[ctx.device.type]
    x, y = (torch.rand(n, device=ctx.device) for _ in range(2))
    z = torch.empty_like(x)
    dist.barrier()
    seconds = per_call_s(lambda: torch.add(x, y, out=z), ctx.device, b)
    return 3.0 * 4 * n, slowest([seconds])[0]


def time_attention(ctx: MeshContext, dtype: torch.dtype, b: Budget) -> AttentionTiming:
    hidden, heads, seq = ATTENTION[ctx.device.type]
    q, k, v = (
        torch.randn(1, heads, seq, hidden // heads, dtype=dtype, device=ctx.device)
        for _ in range(3)
    )
    dist.barrier()
    seconds = per_call_s(
        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), ctx.device, b
    )
    return AttentionTiming(hidden, heads, seq, slowest([seconds])[0])


def block_step(ctx: MeshContext, dtype: str) -> tuple[ModelConfig, Callable[[], None]]:
    """Forward plus backward of the probe's own block, as a step runs it: autograd on,
    bf16 by autocast like the probe's --dtype bf16, gradients accumulating across calls as
    they do across a step's micro-batches."""
    hidden, heads, seq = OVERHEAD_BLOCK[ctx.device.type]
    m = ModelConfig(hidden=hidden, heads=heads, layers=1, seq_len=seq)
    block = Block(m, TPComm(None, 1, 0, NullTimer())).to(ctx.device)
    init_parameters(block, m, seed=0, tp=1, tp_rank=0)
    x = torch.randn(1, seq, hidden, device=ctx.device, requires_grad=True)
    grad = torch.randn(1, seq, hidden, device=ctx.device)
    cast = torch.autocast(ctx.device.type, dtype=torch.bfloat16, enabled=dtype == "bf16")

    def step() -> None:
        with cast:
            out = block(x)
        out.backward(grad.to(out.dtype))

    return m, step


def time_optimizer(
    ctx: MeshContext,
    dtype: str,
    b: Budget,
    work: Callable[[], None] | None = None,
    blocks: int = 4,
) -> OptimizerTiming:
    """One AdamW step, as gpu_probe/train.py builds it, over ``blocks`` probe blocks' params.
    With ``work`` (CPU), each step follows a run of it and is timed alone on the wall clock,
    as a training step reaches its optimizer: back to back, its host loop ran ~40% faster."""
    m, _ = block_step(ctx, dtype)
    params = [p for _ in range(blocks) for p in Block(m, TPComm(None, 1, 0, NullTimer()))
              .to(ctx.device).parameters()]  # fmt: skip
    for p in params:
        p.grad = torch.randn_like(p)
    adam = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01)
    dist.barrier()
    seconds = per_call_s(adam.step, ctx.device, b) if work is None else _after(adam.step, work, b)
    return OptimizerTiming(sum(p.numel() for p in params), len(params), slowest([seconds])[0])


def _after(fn: Callable[[], object], work: Callable[[], None], b: Budget) -> float:
    """Median wall seconds of single calls of ``fn``, each right after ``work``."""
    fn()
    times = []
    for _ in range(b.repeats * WORK_CALLS):
        work()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_block(ctx: MeshContext, dtype: str, b: Budget) -> BlockTiming:
    m, step = block_step(ctx, dtype)
    dist.barrier()
    seconds = slowest([per_call_s(step, ctx.device, b)])[0]
    return BlockTiming(m.hidden, m.heads, m.seq_len, seconds)


# -- links ---------------------------------------------------------------------------------


def time_links(
    ctx: MeshContext, axis: str, b: Budget, work: Callable[[], None] | None = None
) -> tuple[list[LinkSample], float | None]:
    """all_reduce, all_gather and p2p exchange per size over every group of ``axis`` at
    once (tp = the ranks of one node, dp = one rank per node: the layout's two kinds), and
    the median seconds of ``work`` as it ran between messages of at most
    ``IN_STEP_MAX_BYTES`` (None without work): a block as a step runs it, ~10-20% slower on
    this box than back to back, and sampled across the whole sweep, not one moment of it.

    ``work`` (CPU): run before every operation, as a step runs a layer between two messages.
    A rank that computed has given its core's other threads time to sleep, and waking them
    is part of what a message costs there: on this 2-core box a 4 KiB exchange took 0.06 ms
    back to back and 0.3-7 ms after 0.2-1 ms of compute. The operation's time then starts
    when the group's last member posts it (``in_flight``), as the probe's in-flight time
    does: a peer still computing is the schedule's wait, which the simulator draws, not the
    link's. On a GPU the collective runs on the device; no gap, no work."""
    n = ctx.size(axis)
    samples, block_s = [], []
    for nbytes in sweep(b.max_bytes):
        for op in LINK_OPS:
            seconds, blocks = _collective_s(link_op(ctx, axis, op, nbytes), ctx, axis, op, b, work)
            samples.append((op, nbytes, seconds))
            block_s += blocks if nbytes <= IN_STEP_MAX_BYTES else []
    times = slowest([s for _, _, s in samples])
    links = [
        LinkSample(op, 2 if op == "p2p" else n, nbytes, t)
        for (op, nbytes, _), t in zip(samples, times, strict=True)
    ]
    return links, (slowest([statistics.median(block_s)])[0] if block_s else None)


def _collective_s(fn, ctx: MeshContext, axis: str, op: str, b: Budget, work):
    """(median seconds per call of ``fn``, seconds of each ``work`` run before one)."""
    fn()
    fn()  # the first call on a group pays its lazy setup (12-32 ms on gloo)
    dist.barrier()
    calls = calls_for(one_call_s(fn, ctx.device), b)
    if work is not None:
        calls = min(calls, WORK_CALLS)
    calls = int(slowest([float(calls)])[0])  # one count on every rank
    if work is not None:
        return _after_work_s(fn, work, calls, b.repeats, ctx, axis, op)
    times = []
    for _ in range(b.repeats):
        dist.barrier()
        times.append(repeat_s(fn, ctx.device, calls) / calls)
    return statistics.median(times), []


def _after_work_s(fn, work, calls: int, repeats: int, ctx: MeshContext, axis: str, op: str):
    starts, ends, blocks = [], [], []
    for _ in range(repeats):
        dist.barrier()
        for _ in range(calls):
            t0 = time.perf_counter()
            work()
            t1 = time.perf_counter()
            fn()
            starts.append(t1)
            ends.append(time.perf_counter())
            blocks.append(t1 - t0)
    flights = [
        end - start for end, start in zip(ends, in_flight(starts, ctx, axis, op), strict=True)
    ]
    return statistics.median(flights), blocks


def in_flight(starts: list[float], ctx: MeshContext, axis: str, op: str) -> list[float]:
    """Each call's start as the latest its partners posted it: the whole group for a
    collective, the pair for an exchange. perf_counter is CLOCK_MONOTONIC, one clock for
    the processes of one host; a group across hosts keeps each rank's own start."""
    if ctx.layout.crosses_node(axis):
        return starts
    group = ctx.group(axis)
    mine = torch.tensor([float(ctx.rank), *starts], dtype=torch.float64)
    rows = [torch.empty_like(mine) for _ in range(ctx.size(axis))]
    dist.all_gather(rows, mine, group=group)
    by_rank = {int(r[0].item()): r[1:].tolist() for r in rows}
    partners = _partners(ctx, axis, op)
    return [max(by_rank[p][i] for p in partners) for i in range(len(starts))]


def _partners(ctx: MeshContext, axis: str, op: str) -> list[int]:
    members = ctx.layout.group(axis, ctx.rank)
    if op != "p2p":
        return members
    me = members.index(ctx.rank)
    return [ctx.rank] if me ^ 1 >= len(members) else [ctx.rank, members[me ^ 1]]
