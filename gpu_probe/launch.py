"""Entry point for ``python -m gpu_probe``, torchrun, and ``meshscope probe``.

Under torchrun (RANK and WORLD_SIZE set) this process *is* one rank. Otherwise it launches
dp*tp*pp ranks on this machine. On CPU it forks them with
``torch.multiprocessing.start_processes(start_method="fork")`` from this parent, which has
imported torch but run no torch op: 8 ranks are ready in ~0.1 s instead of torchrun's ~12 s
of re-importing torch per child. CUDA cannot be forked after init, so on GPUs it spawns.

The parent supervises rather than joining with mp's default (which kills every rank as soon
as one fails): when a rank dies the others get the collective timeout to fail on their own,
each with an error naming itself, the step and the operation, and the parent prints them.

SIGTERM or SIGINT (Ctrl-C) to the parent ends every rank: each gets SIGTERM, flushes its
reporter (gpu_probe.worker.Terminator) and exits; ranks still alive ``STOP_GRACE_S`` later
are killed. The parent then exits with 128 + the signal, leaving no process behind.

``kill -9`` runs no handler, so every child asks to die with its parent instead
(gpu_probe.lifeline): the launcher with `meshscope probe`, each rank with the launcher,
each torchrun worker with torchrun's agent. ``python -m gpu_probe.torchrun`` is torchrun
with 128 + the signal as its exit code after SIGTERM or SIGINT.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

import torch.multiprocessing as mp

from gpu_probe import lifeline
from gpu_probe.config import ConfigError, ProbeConfig, parse_args
from gpu_probe.errors import ProbeError
from gpu_probe.reporter import Spool
from gpu_probe.worker import RankEnv, env_from_torchrun, new_run_name, run_rank

GRACE_S = 5.0  # beyond the collective timeout, before the parent ends stragglers
STOP_GRACE_S = 5.0  # after a SIGTERM: ranks flush for up to 3 s (Trainer.stop_reporting)


class Stop:
    """The signal that asked the launcher to stop, if any (set by its handler)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum, frame) -> None:
        self.signum = self.signum or signum


def main(argv: list[str] | None = None) -> int:
    """Parse flags, then run as a torchrun rank or launch ranks locally. Returns an exit code."""
    parent = lifeline.parent_from_env()
    lifeline.die_with_parent(parent)  # `meshscope probe` started us
    # Named as typed: `meshscope probe --dp 0` answered "gpu_probe: --dp must be >= 1".
    prog = "meshscope probe" if parent is not None else "gpu_probe"
    try:
        cfg = parse_args(argv, prog)
    except ConfigError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    except SystemExit as exit_:  # argparse: --help or a bad flag
        return int(exit_.code or 0)
    env = env_from_torchrun()
    if env is not None:
        return _run_torchrun_rank(cfg, env)
    return launch_local(cfg)


def _run_torchrun_rank(cfg: ProbeConfig, env: RankEnv) -> int:
    lifeline.die_with_parent(os.getppid())  # torchrun's agent, even when it is SIGKILLed
    try:
        run_rank(cfg, env)
        return 0
    except (ProbeError, ConfigError) as err:
        print(f"[probe] {err}", file=sys.stderr, flush=True)
        return 1


def launch_local(cfg: ProbeConfig) -> int:
    if cfg.run is None:
        cfg = dataclasses.replace(cfg, run=new_run_name())  # one name for every rank
    taken = spool_taken(cfg)
    if taken is not None:
        print(f"[probe] {taken}", file=sys.stderr)
        return 2
    stop = Stop()
    stop.install()  # before the fork: no moment without it; each rank installs its own
    with tempfile.TemporaryDirectory(prefix="gpu_probe-") as errors_dir:
        args = (cfg, _free_port(), errors_dir, os.getpid())
        procs = start_ranks(_local_rank_main, args, cfg)
        ended = supervise(procs, cfg.collective_timeout_s + GRACE_S, stop)
        messages = _read_errors(Path(errors_dir), procs, ended)
    if stop.signum is not None:
        name = signal.Signals(stop.signum).name
        print(f"[probe] run {cfg.run} stopped by {name}: every rank ended", file=sys.stderr)
        return 128 + stop.signum
    if all(p.exitcode == 0 for p in procs):
        if not cfg.quiet:
            print(f"[probe] run {cfg.run}: {cfg.world_size} ranks finished", flush=True)
        return 0
    print(f"[probe] run {cfg.run} failed:", file=sys.stderr)
    for line in messages:
        print(f"  {line}", file=sys.stderr)
    return 1


def spool_taken(cfg: ProbeConfig) -> str | None:
    """The conflict every rank would find (train.Trainer._open_reporter), said once before
    any starts: each rank said it, then the launcher again per rank (16 lines at 8 ranks)."""
    if cfg.resume or cfg.run is None:
        return None
    out = Path(cfg.out) if cfg.out else Path("probe-out") / cfg.run  # as worker.run_rank
    if not any(Spool(p).last_attempt() is not None for p in sorted(out.glob("rank-*.jsonl"))):
        return None
    return (f"spool {out} already holds run {cfg.run!r}: pass --resume to continue it, or "
            "another --run-name / --out")  # fmt: skip


def start_ranks(fn, args: tuple, cfg: ProbeConfig) -> list:
    """Start ``cfg.world_size`` processes running ``fn(local_rank, *args)``."""
    method = "spawn" if _wants_cuda(cfg) else "fork"
    if method == "fork":
        _preload(cfg)
    ctx = mp.start_processes(fn, args=args, nprocs=cfg.world_size, join=False, start_method=method)
    return list(ctx.processes)


def supervise(procs: list, grace_s: float, stop: Stop | None = None) -> set[int]:
    """Wait for every rank; after the first failure allow ``grace_s``, then end the rest;
    on a stop signal end them all at once. Returns the ranks this had to end."""
    first_failure: float | None = None
    try:
        while any(p.is_alive() for p in procs):
            if stop is not None and stop.signum is not None:
                break
            if first_failure is None and any(p.exitcode not in (None, 0) for p in procs):
                first_failure = time.monotonic()
            if first_failure is not None and time.monotonic() - first_failure > grace_s:
                break
            time.sleep(0.05)
    finally:
        ended = _end(procs)
    return ended


def _end(procs: list) -> set[int]:
    """SIGTERM every live rank (each flushes and exits), SIGKILL what outlives the grace."""
    ended = {rank for rank, p in enumerate(procs) if p.is_alive()}
    for rank in ended:
        procs[rank].terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs:
        p.join(max(deadline - time.monotonic(), 0.1))
        if p.is_alive():
            p.kill()
            p.join(1.0)
    return ended


def _local_rank_main(
    local_rank: int, cfg: ProbeConfig, port: int, errors_dir: str, launcher: int
) -> None:
    lifeline.die_with_parent(launcher)  # a fork does not inherit the parent-death signal
    env = RankEnv(
        rank=local_rank,
        world_size=cfg.world_size,
        local_rank=local_rank,
        local_world_size=cfg.world_size,
        node=0,
        init_method=f"tcp://127.0.0.1:{port}",
    )
    try:
        run_rank(cfg, env)
    except BaseException as err:  # noqa: BLE001 - report every failure, then exit hard
        kind = "" if isinstance(err, ProbeError | ConfigError) else f"{type(err).__name__}: "
        message = f"{kind}{err}".strip() or type(err).__name__
        # Written whole, then renamed: a rank ended by the launcher mid-write (the signal
        # that stops the run reaches every rank) must not leave the launcher an empty file.
        tmp = Path(errors_dir, f".rank-{local_rank:05d}.tmp")
        tmp.write_text(message)
        tmp.replace(Path(errors_dir, f"rank-{local_rank:05d}.txt"))
        print(f"[probe] {message}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        # No interpreter teardown: gloo threads blocked on a dead peer must not delay exit.
        os._exit(1)


def _read_errors(errors_dir: Path, procs: list, ended: set[int]) -> list[str]:
    lines = []
    for rank, p in enumerate(procs):
        file = errors_dir / f"rank-{rank:05d}.txt"
        text = file.read_text().strip() if file.exists() else ""
        if text:
            lines.append(text.splitlines()[0])
        elif rank in ended:
            lines.append(f"rank {rank} was still running after the others failed: ended it")
        elif p.exitcode is not None and p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            lines.append(f"rank {rank} was killed by {name}")
        elif p.exitcode not in (0, None):
            lines.append(f"rank {rank} exited with code {p.exitcode}")
    return lines


def _preload(cfg: ProbeConfig) -> None:
    """Import once here what every rank would import on its own (imports run no torch op).

    ``torch.optim``'s first ``add_param_group`` imports torch._dynamo (~2 s); DCP is ~1 s.
    Forked ranks inherit the parent's modules, so 8 ranks on 2 cores save ~8 s of CPU.
    """
    import torch._dynamo  # noqa: F401

    if cfg.checkpoint_dir:
        import torch.distributed.checkpoint  # noqa: F401


def _wants_cuda(cfg: ProbeConfig) -> bool:
    if cfg.device != "auto":
        return cfg.device == "cuda"
    # Ask without creating a CUDA context in the parent (forked children could not use it).
    import torch

    return torch.cuda.device_count() > 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
