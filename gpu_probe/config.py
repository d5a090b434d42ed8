"""Command-line flags -> a validated, frozen ProbeConfig. No torch, no side effects.

Flag names avoid prefixes of torchrun's own options, because torchrun parses the flags that
follow the module too: ``--run`` is ambiguous there (``--run-path``), so ``--run-name`` is the
spelling that works everywhere and ``--run`` is kept for ``meshscope probe``.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from app.core.inputs.protocol import RUN_NAME_PATTERN, ModelShape, RunInfo, oversize
from app.core.layout.topology import Layout, parse_order
from app.core.schedules import MULTI_CHUNK, ScheduleError, ScheduleName, build, chunks_per_rank


class ConfigError(ValueError):
    """Flags that cannot run; the message states the arithmetic."""


@dataclass(frozen=True)
class ModelConfig:
    hidden: int = 64
    heads: int = 4
    layers: int = 4
    vocab: int = 64
    seq_len: int = 16
    microbatch_size: int = 1


@dataclass(frozen=True)
class ProbeConfig:
    dp: int = 1
    tp: int = 1
    pp: int = 1
    order: tuple[str, ...] = ("tp", "pp", "dp")
    schedule: ScheduleName = ScheduleName.one_f_one_b
    microbatches: int = 4
    virtual_stages: int = 1
    steps: int = 10
    model: ModelConfig = field(default_factory=ModelConfig)
    lr: float = 1e-3
    weight_decay: float = 0.0
    seed: int = 0
    dtype: str = "fp32"
    device: str = "auto"
    gpus_per_node: int | None = None  # None: LOCAL_WORLD_SIZE under torchrun, else world
    peak_tflops: float | None = None  # None: gpu_probe/device_peak.py decides
    out: str | None = None
    server: str | None = None
    token: str | None = None
    run: str | None = None
    checkpoint_dir: str | None = None
    checkpoint_every: int = 0
    keep_checkpoints: int = 2
    resume: bool = False
    collective_timeout_s: float = 60.0
    bench_collectives: bool = False
    bench_max_bytes: int | None = None
    timing: bool = True
    dump_params: str | None = None
    kill_at: tuple[int, int] | None = None  # (rank, step): fault injection for tests
    hang_at: tuple[int, int] | None = None
    profile: str | None = None  # --profile: torch.profiler traces go here ("" = default dir)
    profile_steps: int = 3
    slow_rank: int | None = None  # testing: this rank sleeps slow_ms in each forward
    slow_ms: float = 0.0
    report_flush_timeout_s: float = 10.0
    quiet: bool = False

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp

    @property
    def chunks(self) -> int:
        return chunks_per_rank(self.schedule, self.virtual_stages)

    def layout(self, gpus_per_node: int) -> Layout:
        return Layout(self.dp, self.tp, self.pp, self.order, gpus_per_node)


def _parser(prog: str = "gpu_probe") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Train a tiny GPT with real DP x TP x PP collectives and time every action.",
        allow_abbrev=False,
    )
    g = p.add_argument_group("mesh and schedule")
    g.add_argument("--dp", type=int, default=1)
    g.add_argument("--tp", type=int, default=1)
    g.add_argument("--pp", type=int, default=1)
    g.add_argument("--order", default="tp-pp-dp", help="rank order, fastest axis first")
    g.add_argument("--schedule", default="1f1b", choices=[s.value for s in ScheduleName])
    g.add_argument("--microbatches", type=int, default=4)
    g.add_argument("--virtual-stages", type=int, default=None, help="chunks per rank")
    g.add_argument("--steps", type=int, default=10)
    g.add_argument("--gpus-per-node", type=int, default=None)
    m = p.add_argument_group("model and training")
    m.add_argument("--hidden", type=int, default=64)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--layers", type=int, default=None, help="default: 2 per pipeline chunk")
    m.add_argument("--vocab", type=int, default=64)
    m.add_argument("--seq-len", type=int, default=16)
    m.add_argument("--microbatch-size", type=int, default=1, help="sequences per microbatch")
    m.add_argument("--lr", type=float, default=1e-3)
    m.add_argument("--weight-decay", type=float, default=0.0)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    m.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    m.add_argument("--peak-tflops", type=float, default=None,
                   help="the device's peak TFLOP/s at --dtype, for MFU (default: from the "
                   "GPU's name for bf16 on known GPUs, else none)")  # fmt: skip
    o = p.add_argument_group("output")
    o.add_argument("--out", default=None, help="spool directory (default probe-out/RUN)")
    o.add_argument("--server", default=None, help="ws://host:port/ws/ingest")
    o.add_argument("--token", default=None, help="default: $MESHSCOPE_INGEST_TOKEN")
    o.add_argument("--run-name", "--run", dest="run", default=None)
    o.add_argument("--report-flush-timeout", type=float, default=10.0)
    o.add_argument("--no-timing", action="store_true", help="run without timers (benchmarks)")
    o.add_argument("--quiet", action="store_true")
    c = p.add_argument_group("checkpoints and failures")
    c.add_argument("--checkpoint-dir", default=None)
    c.add_argument("--checkpoint-every", type=int, default=0)
    c.add_argument("--keep-checkpoints", type=int, default=2)
    c.add_argument("--resume", action="store_true")
    c.add_argument("--collective-timeout", type=float, default=60.0, help="seconds")
    c.add_argument("--kill-at", default=None, metavar="RANK:STEP", help="testing: SIGKILL")
    c.add_argument("--hang-at", default=None, metavar="RANK:STEP", help="testing: sleep")
    b = p.add_argument_group("collective probe and testing")
    b.add_argument("--bench-collectives", action="store_true")
    b.add_argument("--bench-max-bytes", type=int, default=None)
    b.add_argument("--dump-params", default=None, metavar="DIR")
    b.add_argument(
        "--profile",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="write a torch.profiler trace per rank (rankK_trace.json.gz) to DIR "
        "(default OUT/traces) for --profile-steps steps after one warm-up step",
    )
    b.add_argument("--profile-steps", type=int, default=3)
    b.add_argument(
        "--slow-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing: this rank sleeps --slow-ms in each forward (a slow GPU)",
    )
    b.add_argument("--slow-ms", type=float, default=0.0)
    return p


def parse_args(argv: list[str] | None, prog: str = "gpu_probe") -> ProbeConfig:
    """Parse and validate; raises ConfigError (argparse itself exits on unknown flags).
    ``prog``: the command the user typed, for --help and argparse's errors."""
    a = _parser(prog).parse_args(argv)
    try:
        order = parse_order(a.order)
        schedule = ScheduleName(a.schedule)
    except ValueError as err:
        raise ConfigError(str(err)) from err
    v = a.virtual_stages or (2 if schedule in MULTI_CHUNK else 1)
    chunks = chunks_per_rank(schedule, v)
    layers = a.layers if a.layers is not None else 2 * a.pp * chunks
    model = ModelConfig(a.hidden, a.heads, layers, a.vocab, a.seq_len, a.microbatch_size)
    cfg = ProbeConfig(
        dp=a.dp, tp=a.tp, pp=a.pp, order=order, schedule=schedule,
        microbatches=a.microbatches, virtual_stages=v, steps=a.steps, model=model,
        lr=a.lr, weight_decay=a.weight_decay, seed=a.seed, dtype=a.dtype, device=a.device,
        peak_tflops=a.peak_tflops,
        gpus_per_node=a.gpus_per_node, out=a.out, server=a.server,
        token=a.token or os.environ.get("MESHSCOPE_INGEST_TOKEN"), run=a.run,
        checkpoint_dir=a.checkpoint_dir, checkpoint_every=a.checkpoint_every,
        keep_checkpoints=a.keep_checkpoints, resume=a.resume,
        collective_timeout_s=a.collective_timeout, bench_collectives=a.bench_collectives,
        bench_max_bytes=a.bench_max_bytes, timing=not a.no_timing, dump_params=a.dump_params,
        kill_at=_parse_fault("--kill-at", a.kill_at),
        hang_at=_parse_fault("--hang-at", a.hang_at),
        profile=a.profile, profile_steps=a.profile_steps, slow_rank=a.slow_rank,
        slow_ms=a.slow_ms,
        report_flush_timeout_s=a.report_flush_timeout,
        quiet=a.quiet,
    )  # fmt: skip
    validate(cfg)
    return cfg


def _parse_fault(flag: str, text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"(\d+):(\d+)", text)
    if not match:
        raise ConfigError(f"{flag} wants RANK:STEP, got {text!r}")
    return int(match[1]), int(match[2])


def validate(cfg: ProbeConfig) -> None:
    _check_positive(cfg)
    _check_profile_window(cfg)
    try:
        build(cfg.schedule, cfg.pp, cfg.microbatches, cfg.virtual_stages)
    except ScheduleError as err:
        raise ConfigError(f"schedule {cfg.schedule.value}: {err}") from err
    m, stages = cfg.model, cfg.pp * cfg.chunks
    if m.layers % stages:
        raise ConfigError(
            f"--layers {m.layers} must split evenly into pp*chunks = {cfg.pp}*{cfg.chunks} "
            f"= {stages} pipeline chunks ({m.layers} % {stages} = {m.layers % stages})"
        )
    if m.hidden % m.heads:
        raise ConfigError(f"--hidden {m.hidden} must be divisible by --heads {m.heads}")
    if m.heads % cfg.tp:
        raise ConfigError(f"--heads {m.heads} must be divisible by --tp {cfg.tp}")
    _check_size(cfg)
    if cfg.run is not None and not re.fullmatch(RUN_NAME_PATTERN, cfg.run):
        raise ConfigError(f"--run-name {cfg.run!r} must match {RUN_NAME_PATTERN}")
    if cfg.server and not cfg.token:
        raise ConfigError("--server needs --token or $MESHSCOPE_INGEST_TOKEN")
    if cfg.checkpoint_every and not cfg.checkpoint_dir:
        raise ConfigError("--checkpoint-every needs --checkpoint-dir")
    if cfg.resume and not cfg.checkpoint_dir:
        raise ConfigError("--resume needs --checkpoint-dir")
    if cfg.slow_rank is not None and not 0 <= cfg.slow_rank < cfg.world_size:
        raise ConfigError(f"--slow-rank {cfg.slow_rank} is not a rank of {cfg.world_size}")
    if not 0 <= cfg.slow_ms <= 60_000:
        raise ConfigError(f"--slow-ms must be in [0, 60000], got {cfg.slow_ms}")
    if cfg.peak_tflops is not None and not 0 < cfg.peak_tflops <= 100_000:
        raise ConfigError(f"--peak-tflops must be in (0, 100000], got {cfg.peak_tflops}")


def _check_size(cfg: ProbeConfig) -> None:
    """The server's bounds on a run (protocol.oversize) at start, not at the first hello:
    a run the server would refuse fails here, naming the product that is too big."""
    m = cfg.model
    try:
        info = RunInfo(
            run="size-check", dp=cfg.dp, tp=cfg.tp, pp=cfg.pp, order="-".join(cfg.order),
            gpus_per_node=1, schedule=cfg.schedule, microbatches=cfg.microbatches,
            virtual_stages=cfg.virtual_stages, steps=cfg.steps, dtype=cfg.dtype, device="cpu",
            model=ModelShape(hidden=m.hidden, heads=m.heads, layers=m.layers, vocab=m.vocab,
                             seq_len=m.seq_len, microbatch_size=m.microbatch_size),
        )  # fmt: skip
    except ValidationError as err:
        e = err.errors()[0]
        raise ConfigError(f"{'.'.join(map(str, e['loc']))}: {e['msg']}") from None
    reason = oversize(info)
    if reason:
        raise ConfigError(reason.removeprefix("info: "))


def profile_window(steps: int, wanted: int) -> tuple[int, int]:
    """(warm-up, recorded) steps of a run of ``steps``: one warm-up when there is room."""
    warmup = 1 if steps > 1 else 0
    return warmup, max(min(wanted, steps - warmup), 0)


def _check_profile_window(cfg: ProbeConfig) -> None:
    """--profile records profile_window's steps; asking for more than --steps leaves was cut
    short without a word."""
    if cfg.profile is None:
        return
    warmup, room = profile_window(cfg.steps, cfg.profile_steps)
    if cfg.profile_steps > room:
        after = " after one warm-up step" if warmup else ""
        raise ConfigError(
            f"--profile-steps {cfg.profile_steps} is more than the {room} step(s) "
            f"--steps {cfg.steps} leaves to profile{after}"
        )


def _check_positive(cfg: ProbeConfig) -> None:
    m = cfg.model
    minimums = {
        "--dp": (cfg.dp, 1), "--tp": (cfg.tp, 1), "--pp": (cfg.pp, 1),
        "--microbatches": (cfg.microbatches, 1), "--virtual-stages": (cfg.virtual_stages, 1),
        "--hidden": (m.hidden, 1), "--heads": (m.heads, 1), "--layers": (m.layers, 1),
        "--seq-len": (m.seq_len, 2), "--vocab": (m.vocab, 2),
        "--microbatch-size": (m.microbatch_size, 1),
        "--keep-checkpoints": (cfg.keep_checkpoints, 1),
        "--steps": (cfg.steps, 0), "--checkpoint-every": (cfg.checkpoint_every, 0),
        "--profile-steps": (cfg.profile_steps, 1),
    }  # fmt: skip
    for flag, (value, low) in minimums.items():
        if value < low:
            raise ConfigError(f"{flag} must be >= {low}, got {value}")
    if not 0 < cfg.collective_timeout_s <= 3600:
        raise ConfigError("--collective-timeout must be in (0, 3600] seconds")
