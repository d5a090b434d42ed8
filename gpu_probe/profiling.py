"""``--profile``: wrap a bounded number of training steps in ``torch.profiler`` and write one
Kineto trace per rank, ``rankK_trace.json.gz``, as torchtitan names its own
(``profiling/traces/iteration_N/rankK_trace.json.gz``), for ``meshscope import-trace``.

The first step is a warm-up, not recorded (torch.profiler's ``schedule(warmup=1)``): it holds
each subgroup's lazy setup (12-32 ms on gloo, notes-torch-cpu.md) that no later step pays.
Then ``--profile-steps`` steps are recorded and written at once; later steps run unprofiled,
so a long run's trace stays a few MB per rank (about 1.5 MB a step on CPU). The trace carries
``distributedInfo`` (torch writes it once the process group exists) and the probe's own
names as ``record_function`` ranges (gpu_probe.timing.range_name).
"""

from __future__ import annotations

from pathlib import Path

from torch.profiler import ProfilerActivity, profile, schedule

from gpu_probe.config import ProbeConfig, profile_window


def trace_dir(cfg: ProbeConfig, out_dir: Path) -> Path | None:
    """Where the traces go: ``--profile DIR``, or ``OUT/traces`` for a bare ``--profile``."""
    if cfg.profile is None:
        return None
    return Path(cfg.profile) if cfg.profile else Path(out_dir) / "traces"


class StepProfiler:
    """A context around the training loop; ``step()`` after each step. Does nothing
    without ``--profile``."""

    def __init__(self, cfg: ProbeConfig, rank: int, out_dir: Path, steps: int) -> None:
        self.dir = trace_dir(cfg, out_dir)
        self.path = self.dir / f"rank{rank}_trace.json.gz" if self.dir else None
        self.warmup, self.active = profile_window(steps, cfg.profile_steps)
        self.on = self.dir is not None and self.active > 0
        self._prof = None

    def __enter__(self) -> StepProfiler:
        if self.on:
            self.dir.mkdir(parents=True, exist_ok=True)
            activities = [ProfilerActivity.CPU]
            if _cuda_ready():
                activities.append(ProfilerActivity.CUDA)
            self._prof = profile(
                activities=activities,
                schedule=schedule(wait=0, warmup=self.warmup, active=self.active, repeat=1),
                on_trace_ready=self._write,
                record_shapes=True,  # c10d::send's peer is one of its concrete inputs
            )
            self._prof.__enter__()
        return self

    def step(self) -> None:
        if self._prof is not None:
            self._prof.step()

    def __exit__(self, *exc) -> None:
        if self._prof is not None:
            self._prof.__exit__(*exc)
            self._prof = None

    def _write(self, prof) -> None:
        # torch gzips the export itself when the name ends in .gz (torch/profiler/profiler.py).
        prof.export_chrome_trace(str(self.path))


def _cuda_ready() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_initialized()
