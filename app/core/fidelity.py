"""Published training runs, and how far the cost model's predictions land from them.

No constant here is tuned per row: each row is a scenario built from the paper's own
configuration, predicted with the same global cost model, and compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core import costs
from app.core.evaluate import evaluate
from app.core.presets import HARDWARE, MODELS
from app.core.scenario import Scenario


@dataclass(frozen=True)
class PublishedRun:
    source: str
    model: str
    gpus: int
    tp: int
    pp: int
    global_batch: int
    hardware: str
    recompute: str
    sequence_parallel: bool = False
    tflops_per_gpu: float | None = None  # as reported, counting their own FLOP formula
    iteration_s: float | None = None
    mfu: float | None = None

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp)


def _megatron(model: str, gpus: int, tp: int, pp: int, batch: int, tflops: float) -> PublishedRun:
    return PublishedRun(
        "Narayanan et al. 2021 Table 1", model, gpus, tp, pp, batch, "a100-80g", "full",
        tflops_per_gpu=tflops,
    )  # fmt: skip


def _korthikanti(model: str, gpus: int, pp: int, batch: int, secs: float, mfu: float):
    return PublishedRun(
        "Korthikanti et al. 2022 Table 5", model, gpus, 8, pp, batch, "a100-80g", "selective",
        sequence_parallel=True, iteration_s=secs, mfu=mfu,
    )  # fmt: skip


PUBLISHED: tuple[PublishedRun, ...] = (
    _megatron("megatron-1.7b", 32, 1, 1, 512, 137),
    _megatron("megatron-3.6b", 64, 2, 1, 512, 138),
    _megatron("megatron-7.5b", 128, 4, 1, 512, 142),
    _megatron("megatron-18b", 256, 8, 1, 1024, 135),
    _megatron("megatron-39b", 512, 8, 2, 1536, 138),
    _megatron("megatron-76b", 1024, 8, 4, 1792, 140),
    _megatron("megatron-145b", 1536, 8, 8, 2304, 148),
    _megatron("megatron-310b", 1920, 8, 16, 2160, 155),
    _megatron("megatron-530b", 2520, 8, 35, 2520, 163),
    _megatron("megatron-1t", 3072, 8, 64, 3072, 163),
    _korthikanti("megatron-22b", 8, 1, 4, 1.10, 0.415),
    _korthikanti("gpt3-175b", 64, 8, 64, 13.75, 0.514),
    _korthikanti("megatron-530b", 280, 35, 280, 37.83, 0.560),
    _korthikanti("megatron-1t", 512, 64, 512, 71.49, 0.563),
    # Dubey et al. 2024 Table 4: 16,384 H100s, TP8 CP1 PP16 DP128, 16M tokens per batch,
    # 400 TFLOP/s per GPU (41% of peak).
    PublishedRun(
        "Dubey et al. 2024 Table 4",
        "llama3-405b",
        16384,
        8,
        16,
        2048,
        "h100-sxm",
        "selective",
        sequence_parallel=True,
        tflops_per_gpu=400,
        mfu=0.41,
    ),  # fmt: skip
)


def scenario_of(run: PublishedRun) -> Scenario:
    microbatches = run.global_batch // run.dp  # micro-batch size 1, as in both papers' runs
    return Scenario(
        dp=run.dp, tp=run.tp, pp=run.pp, schedule="1f1b", microbatches=microbatches,
        model=run.model, hardware=run.hardware, recompute=run.recompute,
        sequence_parallel=run.sequence_parallel, gpus_per_node=8,
    )  # fmt: skip


def published_iteration_s(run: PublishedRun) -> float:
    """The iteration time the paper reports, or the one its TFLOP/s figure implies."""
    if run.iteration_s is not None:
        return run.iteration_s
    model = MODELS[run.model]
    # Narayanan et al. 2021 §5.1: their TFLOP/s count eq. 3's FLOPs (with recompute).
    flops = costs.hardware_flops(model, run.global_batch, run.recompute)
    return flops / (run.gpus * run.tflops_per_gpu * 1e12)


def published_mfu(run: PublishedRun) -> float:
    """MFU from the published time: model FLOPs / (time x GPUs x peak)."""
    model, hw = MODELS[run.model], HARDWARE[run.hardware]
    flops = costs.model_flops(model, run.global_batch)
    return flops / (published_iteration_s(run) * run.gpus * hw.peak_tflops * 1e12)


@dataclass(frozen=True)
class Comparison:
    run: PublishedRun
    published_s: float
    predicted_s: float
    published_mfu: float
    predicted_mfu: float

    @property
    def time_error(self) -> float:
        return (self.predicted_s - self.published_s) / self.published_s


def compare(run: PublishedRun) -> Comparison:
    view = evaluate(scenario_of(run))
    return Comparison(
        run, published_iteration_s(run), view["step_time_s"], published_mfu(run), view["mfu"]
    )


def table() -> str:
    """A markdown table of every published run against the prediction."""
    head = (
        "| source | model | GPUs | TP | PP | DP | published s | predicted s | error "
        "| published MFU | predicted MFU |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for c in map(compare, PUBLISHED):
        r = c.run
        rows.append(
            f"| {r.source} | {r.model} | {r.gpus} | {r.tp} | {r.pp} | {r.dp} "
            f"| {c.published_s:.2f} | {c.predicted_s:.2f} | {c.time_error:+.0%} "
            f"| {c.published_mfu:.1%} | {c.predicted_mfu:.1%} |"
        )
    return head + "\n".join(rows) + "\n"
