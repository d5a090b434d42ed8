"""``meshscope calibrate``: measure this machine, write a hardware profile the server loads.

    python -m gpu_probe.calibrate --local [--ranks N] [--out PATH] [--name NAME]
    torchrun --nnodes K --nproc-per-node N -m gpu_probe.calibrate --out PATH

Every rank measures at once (calibrate_bench): GEMMs, a memory stream, one attention, one
launch-bound transformer block, and all-reduce / all-gather / ping-pong per message size
inside a node (the ranks of one node form the group, as TP would) and, with several nodes,
across them (one rank per node, as DP would). Rank 0 fits the cost model's constants
(calibrate_profile) and writes PATH, a HardwareProfile JSON for ``meshscope serve
--hardware-profile PATH``, and PATH's ``.raw.json`` sibling with every measured figure.

``--local`` forks the ranks on this machine (spawns them on GPUs), as ``meshscope probe``
does; under torchrun this process is one rank.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import sys
import tempfile
import time
from dataclasses import asdict, replace
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from app.core.inputs.hardware import HARDWARE
from app.core.inputs.hardware_profile import NAME_PATTERN
from app.core.layout.topology import Layout
from gpu_probe import calibrate_bench as bench
from gpu_probe.calibrate_profile import Measurements, profile_from
from gpu_probe.launch import supervise
from gpu_probe.mesh import build_mesh
from gpu_probe.worker import RankEnv, env_from_torchrun

MAX_LOCAL_CPU_RANKS = 8
TIMEOUT_S = 300.0  # one collective; a whole calibration takes seconds to a minute


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="meshscope calibrate", description=__doc__.splitlines()[0])
    p.add_argument("--local", action="store_true", help="launch the ranks on this machine")
    p.add_argument("--ranks", type=int, default=None, help="--local: default cores or GPUs")
    p.add_argument("--out", default="hardware-profile.json", help="profile JSON to write")
    p.add_argument("--name", default=None, help="profile name (default: calibrated-HOST)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default=None,
                   help="GEMM dtype (default: bf16 on GPU, fp32 on CPU)")  # fmt: skip
    p.add_argument("--nics-per-node", type=int, default=None)
    p.add_argument("--quick", action="store_true", help="smaller sweeps: a smoke test")
    p.add_argument(
        "--links-from",
        default=None,
        choices=sorted(HARDWARE),
        help="one rank alone: take the links and node shape from this preset",
    )
    return p


def default_name() -> str:
    host = "".join(c if c.isalnum() else "-" for c in platform.node().lower()).strip("-")
    return f"calibrated-{host or 'host'}"[:64]


def _check(a: argparse.Namespace) -> str | None:
    if a.name is not None and not re.fullmatch(NAME_PATTERN, a.name):
        return f"--name {a.name!r} must match {NAME_PATTERN} (lowercase, URL-safe)"
    if a.ranks is not None and not 1 <= a.ranks <= 64:
        return "--ranks must be in [1, 64]"
    if a.ranks == 1 and a.links_from is None:
        return "--ranks 1 measures no link: name the preset to take links from (--links-from)"
    if a.nics_per_node is not None and a.nics_per_node < 1:
        return "--nics-per-node must be >= 1"
    return None


def main(argv: list[str] | None = None) -> int:
    try:
        a = _parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    problem = _check(a)
    if problem:
        print(f"meshscope calibrate: {problem}", file=sys.stderr)
        return 2
    env = env_from_torchrun()
    if env is not None:
        run_rank(a, env)
        return 0
    if not a.local:
        print("meshscope calibrate: pass --local, or run it under torchrun", file=sys.stderr)
        return 2
    return launch_local(a)


def _wants_cuda(a: argparse.Namespace) -> bool:
    return a.device == "cuda" or (a.device == "auto" and torch.cuda.device_count() > 0)


def launch_local(a: argparse.Namespace) -> int:
    cuda = _wants_cuda(a)
    cores = os.cpu_count() or 2
    ranks = a.ranks or (torch.cuda.device_count() if cuda else min(cores, MAX_LOCAL_CPU_RANKS))
    if ranks < 2 and a.links_from is None:
        print(
            "meshscope calibrate: links need 2 ranks; pass --ranks 2, or --links-from PRESET "
            "to measure this one GPU and take the links from a preset",
            file=sys.stderr,
        )
        return 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="calibrate-") as errors:
        ctx = mp.start_processes(
            _local_rank, args=(a, ranks, port, errors), nprocs=ranks, join=False,
            start_method="spawn" if cuda else "fork",
        )  # fmt: skip
        procs = list(ctx.processes)
        supervise(procs, TIMEOUT_S)
        failed = sorted(Path(errors).glob("rank-*.txt"))
        for f in failed:
            print(f"meshscope calibrate: {f.read_text().strip()}", file=sys.stderr)
    return 0 if all(p.exitcode == 0 for p in procs) and not failed else 1


def _local_rank(local_rank: int, a, ranks: int, port: int, errors: str) -> None:
    env = RankEnv(local_rank, ranks, local_rank, ranks, 0, f"tcp://127.0.0.1:{port}")
    try:
        run_rank(a, env)
    except BaseException as err:  # noqa: BLE001 - say which rank failed, then exit hard
        Path(errors, f"rank-{local_rank:05d}.txt").write_text(f"rank {local_rank}: {err!r}")
        os._exit(1)


def run_rank(a: argparse.Namespace, env: RankEnv) -> None:
    cuda = _wants_cuda(a)
    device = torch.device("cuda", env.local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(1)  # as the probe's ranks run: one core each
    dist.init_process_group(
        backend="cpu:gloo,cuda:nccl" if cuda else "gloo", init_method=env.init_method,
        rank=env.rank, world_size=env.world_size, timeout=timedelta(seconds=TIMEOUT_S),
    )  # fmt: skip
    per_node = env.local_world_size
    nodes = env.world_size // per_node
    # TP over the ranks of a node, DP across nodes: the two kinds of group a layout forms.
    layout = Layout(nodes, per_node, 1, ("tp", "pp", "dp"), per_node)
    if env.world_size == 1 and a.links_from is None:
        raise SystemExit("meshscope calibrate: one rank measures no link: pass --links-from")
    ctx = build_mesh(layout, env.rank, device, env.node)
    meas = measure(ctx, a, nodes)
    if env.rank == 0:
        write(meas, a)
    dist.barrier()
    dist.destroy_process_group()


def measure(ctx, a: argparse.Namespace, nodes: int) -> Measurements:
    b = bench.budget(ctx.device, a.quick)
    dtype = a.dtype or ("bf16" if ctx.device.type == "cuda" else "fp32")
    stream_bytes, stream_s = bench.time_stream(ctx, b)
    work = None if ctx.device.type == "cuda" else bench.block_step(ctx, dtype)[1]
    intra, in_step = bench.time_links(ctx, "tp", b, work) if ctx.size("tp") > 1 else ([], None)
    inter, _ = bench.time_links(ctx, "dp", b, work) if nodes > 1 else ([], None)
    block = bench.time_block(ctx, dtype, b)
    return Measurements(
        host=platform.node() or "unknown", date=time.strftime("%Y-%m-%d"),
        device=ctx.device.type, backend=str(dist.get_backend()), dtype=dtype,
        world=ctx.layout.world_size, ranks_per_node=ctx.size("tp"),
        memory_gib=_memory_gib(ctx.device, ctx.size("tp")),
        gemms=tuple(bench.time_gemms(ctx, bench.DTYPES[dtype], b)),
        stream_bytes=stream_bytes, stream_s=stream_s,
        attention=bench.time_attention(ctx, bench.DTYPES[dtype], b),
        block=block, intra=tuple(intra), inter=tuple(inter),
        block_in_step=None if in_step is None else replace(block, seconds=in_step),
        optimizer=bench.time_optimizer(ctx, dtype, b, work),
        floor_gib=_floor_gib(ctx.device), links_from=a.links_from,
    )  # fmt: skip


def _floor_gib(device: torch.device) -> float | None:
    """Device memory in use that the caching allocator does not hold, read after the links
    ran (so NCCL's communicators and buffers exist) and the GEMMs (cuBLAS's handles): the
    CUDA context, NCCL and library workspaces, as HardwareSpec.memory_floor_gib means it."""
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    free, total = torch.cuda.mem_get_info(device)
    return max(total - free - torch.cuda.memory_reserved(device), 0) / 2**30


def _memory_gib(device: torch.device, ranks_per_node: int) -> float:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory / 2**30
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return pages / 2**30 / ranks_per_node  # the machine's RAM, shared by its ranks


def write(meas: Measurements, a: argparse.Namespace) -> None:
    profile = profile_from(meas, a.name or default_name(), a.nics_per_node)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(profile.model_dump_json(indent=1) + "\n")
    raw = out.with_name(out.stem + ".raw.json")
    raw.write_text(json.dumps(asdict(meas), indent=1) + "\n")
    e = profile.efficiency
    print(
        f"[calibrate] wrote {out} ({raw.name}: the measurements)\n"
        f"  GEMM {profile.peak_tflops * 1e3:.1f} GFLOP/s, half at {e.gemm_half_gflop:.2e} GFLOP; "
        f"memory {profile.hbm_tbps * 1e3:.1f} GB/s; flash {e.flash_fraction:.2f} of GEMM\n"
        f"  links {profile.intra_gbps:.2f} GB/s, {e.intra_latency_us:.0f} us per step; "
        f"{e.kernel_overhead_us:.1f} us per kernel launch, "
        f"{e.optimizer_tensor_us:.1f} us per optimizer tensor\n"
        f"  serve it: meshscope serve --hardware-profile {out}",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
