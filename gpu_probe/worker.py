"""One rank's process: device, process group, mesh, then train or probe the links.

Used by both launchers: torchrun sets RANK/WORLD_SIZE/LOCAL_RANK/GROUP_RANK and we
rendezvous with ``env://``; the local launcher forks ranks and passes a ``tcp://`` address.
Under either, SIGTERM or SIGINT makes the rank flush its reporter and exit 128 + signal.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

from app.core.inputs.protocol import ModelShape, RunInfo
from gpu_probe import device_peak
from gpu_probe.collectives import bench_collectives
from gpu_probe.config import ConfigError, ProbeConfig
from gpu_probe.mesh import build_mesh
from gpu_probe.profiling import trace_dir
from gpu_probe.train import Trainer


@dataclass(frozen=True)
class RankEnv:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    node: int
    init_method: str


def env_from_torchrun() -> RankEnv | None:
    """The rank's place as torchrun (or any env:// launcher) describes it, else None."""
    env = os.environ
    if "RANK" not in env or "WORLD_SIZE" not in env:
        return None
    world = int(env["WORLD_SIZE"])
    return RankEnv(
        rank=int(env["RANK"]),
        world_size=world,
        local_rank=int(env.get("LOCAL_RANK", 0)),
        local_world_size=int(env.get("LOCAL_WORLD_SIZE", world)),
        node=int(env.get("GROUP_RANK", 0)),  # torchrun's node index
        init_method="env://",
    )


def new_run_name() -> str:
    return f"probe-{time.strftime('%Y%m%d-%H%M%S')}-{os.urandom(2).hex()}"


def pick_device(cfg: ProbeConfig, local_rank: int) -> torch.device:
    want_cuda = cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available())
    if want_cuda and not torch.cuda.is_available():
        raise ConfigError("--device cuda, but torch sees no CUDA device")
    return torch.device("cuda", local_rank) if want_cuda else torch.device("cpu")


class Terminator:
    """SIGTERM or SIGINT: flush from a helper thread, then exit with 128 + the signal.

    A Python handler runs only once the main thread is back in the interpreter, and a rank
    blocked in a gloo collective may not be for the whole collective timeout. The wakeup fd
    is written by the C-level handler at once, so a thread blocked reading it acts even then.
    """

    def __init__(self) -> None:
        self.on_signal: Callable[[str], None] | None = None

    def install(self) -> None:
        """Main thread only (``signal.set_wakeup_fd``); elsewhere signals keep their defaults."""
        if threading.current_thread() is not threading.main_thread():
            return
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _note_only)
        threading.Thread(target=self._wait, args=(read_fd,), name="probe-term", daemon=True).start()

    def _wait(self, read_fd: int) -> None:
        signum = os.read(read_fd, 1)[0]
        try:
            if self.on_signal is not None:
                self.on_signal(f"stopped by {signal.Signals(signum).name}")
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            # No interpreter teardown: the training thread may be blocked on a peer.
            os._exit(128 + signum)


def _note_only(signum, frame) -> None:
    """The work happens on Terminator's thread; the Python-level handler does nothing."""


def run_rank(cfg: ProbeConfig, env: RankEnv) -> None:
    terminator = Terminator()
    terminator.install()
    if env.world_size != cfg.world_size:
        raise ConfigError(
            f"the launcher started {env.world_size} ranks but dp*tp*pp = "
            f"{cfg.dp}*{cfg.tp}*{cfg.pp} = {cfg.world_size}"
        )
    device = pick_device(cfg, env.local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        torch.set_num_threads(1)  # several ranks share the cores; more threads only thrash
    dist.init_process_group(
        backend="cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo",
        init_method=env.init_method,
        rank=env.rank,
        world_size=env.world_size,
        timeout=timedelta(seconds=cfg.collective_timeout_s),
    )
    gpus_per_node = cfg.gpus_per_node or env.local_world_size
    layout = cfg.layout(gpus_per_node)
    if layout.node(env.rank) != env.node:
        print(
            f"[probe] warning: rank {env.rank} runs on node {env.node} but the layout with "
            f"gpus_per_node={gpus_per_node} puts it on node {layout.node(env.rank)}",
            flush=True,
        )
    ctx = build_mesh(layout, env.rank, device, env.node)
    run = _agree([cfg.run or new_run_name()])[0]
    out_dir = Path(cfg.out) if cfg.out else Path("probe-out") / run
    if cfg.bench_collectives:
        profile = bench_collectives(ctx, run, cfg.bench_max_bytes)
        if env.rank == 0:
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "collectives.json").write_text(profile.model_dump_json(indent=1))
            print(profile.model_dump_json(indent=1), flush=True)
    else:
        info = run_info(cfg, run, gpus_per_node, device.type)
        if env.local_rank == 0:  # every node: `meshscope upload` reads it beside the spools
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "run.json").write_text(info.model_dump_json(indent=1))
        trainer = Trainer(cfg, ctx, info, out_dir)
        terminator.on_signal = trainer.stop_reporting
        trainer.train()
    dist.barrier()  # nobody tears down the store while a peer still needs it
    traces = trace_dir(cfg, out_dir)
    if traces is not None and env.rank == 0 and not cfg.bench_collectives:
        # After the barrier: every rank has written its trace (Trainer.train returned).
        print(f"[probe] torch.profiler traces ({cfg.world_size} ranks): {traces}", flush=True)
    dist.destroy_process_group()


def run_info(cfg: ProbeConfig, run: str, gpus_per_node: int, device: str) -> RunInfo:
    m = cfg.model
    return RunInfo(
        run=run, dp=cfg.dp, tp=cfg.tp, pp=cfg.pp, order="-".join(cfg.order),
        gpus_per_node=gpus_per_node, schedule=cfg.schedule, microbatches=cfg.microbatches,
        virtual_stages=cfg.virtual_stages, steps=cfg.steps, dtype=cfg.dtype, device=device,
        peak_tflops=device_peak.peak_tflops(device, cfg.dtype, _device_name(device),
                                            cfg.peak_tflops),
        model=ModelShape(
            hidden=m.hidden, heads=m.heads, layers=m.layers, vocab=m.vocab,
            seq_len=m.seq_len, microbatch_size=m.microbatch_size,
        ),
    )  # fmt: skip


def _device_name(device: str) -> str | None:
    return torch.cuda.get_device_name() if device == "cuda" else None


def _agree(objects: list) -> list:
    """Rank 0's values, on every rank (e.g. a run name generated under torchrun)."""
    dist.broadcast_object_list(objects, src=0)
    return objects
