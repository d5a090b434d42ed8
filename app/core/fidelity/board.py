"""Published, measured training runs (app/core/fidelity/published_runs.py) against the cost model.

Each row becomes the scenario its source describes and is predicted with the one set of
constants of its hardware profile: nothing here is tuned per row. Where a source leaves a
setting unsaid, ``ASSUMED`` fills it per source from what that framework did at the time,
and the row says so; FP8 rows run their source's recipe (FP8_RECIPE). Rows the model cannot
express (an unpublished interleave depth, hardware without a profile) are
kept and say why they are left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from app.core.cost import flops, predict
from app.core.evaluate import Registry, prepare
from app.core.fidelity.published_runs import RUNS, PublishedRun
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import model_of
from app.core.schedules import pipeline

# Per source, what it does not restate in the row: (flash attention, overlapped grad sync,
# recompute when unknown). Megatron 2021/2022 predate FlashAttention (Dao et al. 2022) and
# reduce gradients after the flush (Narayanan et al. 2021 §4); NeMo and torchtitan overlap.
ASSUMED = {
    "Narayanan": (False, False, "full"),  # §5.1: every run recomputes activations
    "Korthikanti": (False, False, "selective"),
    "Jiang": (False, False, "selective"),  # MegaScale: Megatron-LM 2023 defaults (flash opt-in)
    "NVIDIA": (True, True, "selective"),
    "torchtitan": (True, True, "selective"),
    "Dubey": (True, True, "none"),
    # Small models on one node: FlashAttention in all three; PyTorch DDP (Dao's Lightning
    # trainer, nanotron) and FSDP (MosaicML Composer) reduce gradients during the backward.
    "Dao": (True, True, "none"),
    "MosaicML": (True, True, "none"),
    "nanotron": (True, True, "none"),
}
# Sources whose FlashAttention is the 2022 kernel or its Triton port, per each row's caveat:
# the flash-attention training README's speeds are FlashAttention v1's; llm-foundry's tables
# ran attn_impl "triton" (the FlashAttention-1 algorithm in Triton).
FLASH_1 = ("Dao", "MosaicML")
# What a framework does with ZeRO-3 / FSDP that the row does not restate:
# (prefetched gathers, one gather per parameter tensor, gradients reduced in fp32).
# DeepSpeed ZeRO-3 (Narayanan et al. 2021 Table 2's rows) partitions and gathers every
# parameter tensor (Rajbhandari et al. 2021, ZeRO-Infinity §6.1); its prefetch buffer,
# stage3_prefetch_bucket_size, defaults to 5e7 parameters, under a tenth of any GPT-3 175B
# weight matrix (1.5e8 to 4.5e8), so each gather waits for its module (DeepSpeed config
# docs). torchtitan FSDP2: one all-gather per block, the next block's issued under the
# current one (FSDP2 implicit prefetch), training.mixed_precision_reduce = float32.
SHARDED = {"zero-3": (False, True, False), "fsdp": (True, False, True)}
# The FP8 recipe (fp8, fp8_scaling) each source ran, by source prefix. NeMo 24.07's
# performance summary predates current scaling in TE (2.2), so its FP8 rows ran TE's default,
# DelayedScaling; Megatron-Bridge's 25.11 table labels these rows FP8-CS (current scaling);
# torchtitan's Float8 linears scale tensorwise, dynamically (docs/float8.md). A source not
# listed: TE's default, tensorwise delayed.
FP8_RECIPE = {
    "NVIDIA NeMo": ("tensorwise", "delayed"),
    "NVIDIA Megatron-Bridge": ("tensorwise", "current"),
    "torchtitan": ("tensorwise", "current"),
}
# MegaScale states only "Ampere"; its MFU figures work out to a 312 TFLOP/s peak (A100).
HARDWARE_ALIASES = {"a100-unspecified": "a100-80g"}
BASELINE_MFU = 0.5  # the flat "50% of peak" estimate every prediction must beat


def _assumed(run: PublishedRun) -> tuple[bool, bool, str]:
    key = next((k for k in ASSUMED if run.source.startswith(k)), None)
    return ASSUMED[key] if key else (True, False, "selective")


def left_out(run: PublishedRun) -> str:
    """Why a row cannot be predicted faithfully, or "" when it can."""
    if HARDWARE_ALIASES.get(run.hardware, run.hardware) not in HARDWARE:
        return f"no hardware profile for {run.hardware}"
    if run.schedule == "interleaved" and run.vpp is None:
        return "interleave depth not published"
    if run.global_batch is None:
        return "global batch not published"
    return ""


def _shape(run: PublishedRun) -> dict[str, Any]:
    a = run.arch
    if a.preset:  # a mixture of experts: its preset, whose shape run_loader checked
        return dict(model=a.preset)
    return dict(
        model="custom", layers=a.layers, hidden=a.hidden, heads=a.heads, kv_heads=a.kv_heads,
        ffn_hidden=a.ffn_hidden, vocab=a.vocab, seq_len=a.seq_len, gated_mlp=a.gated_mlp,
        # GPT-style models tie the head and learn positions; SwiGLU (Llama) models do neither.
        tied_embeddings=not a.gated_mlp, learned_positions=not a.gated_mlp,
    )  # fmt: skip


def scenario_of(run: PublishedRun) -> Scenario:
    flash, overlap, recompute = _assumed(run)
    micro = run.micro_batch or 1
    interleaved = run.schedule == "interleaved" and (run.vpp or 1) > 1
    zero3 = run.zero in SHARDED
    prefetch, per_tensor, fp32 = SHARDED.get(run.zero, (False, False, False))
    return Scenario(
        dp=run.dp, tp=run.tp, pp=run.pp, cp=run.cp, ep=run.ep, etp=run.etp,
        gpus_per_node=run.gpus_per_node,
        order="megatron-5d" if run.cp > 1 or run.ep > 1 else "megatron",
        schedule="interleaved" if interleaved else "1f1b",
        virtual_stages=run.vpp if interleaved else 1,
        microbatches=run.global_batch // (run.dp * micro), micro_batch_size=micro,
        hardware=HARDWARE_ALIASES.get(run.hardware, run.hardware),
        dtype="fp16" if run.precision == "fp16" else "bf16",
        recompute=recompute if run.recompute == "unknown" else run.recompute,
        sequence_parallel=bool(run.sequence_parallel) or (run.sequence_parallel is None
                                                          and run.tp > 1 and flash),
        recompute_layers=run.recompute_layers,
        zero=3 if zero3 else 0, flash_attention=flash,
        flash_kernel="fa1" if run.source.startswith(FLASH_1) else "fa2",
        overlap_grad_reduce=overlap or zero3, overlap_param_gather=prefetch,
        zero3_per_tensor=per_tensor, grad_reduce_fp32=fp32, **_fp8(run), **_shape(run),
    )  # fmt: skip


def _fp8(run: PublishedRun) -> dict[str, str]:
    """The row's FP8 recipe as scenario fields (FP8_RECIPE); none for a 16-bit row."""
    if run.precision != "fp8":
        return {}
    key = next((k for k in FP8_RECIPE if run.source.startswith(k)), None)
    fp8, scaling = FP8_RECIPE[key] if key else ("tensorwise", "delayed")
    return {"fp8": fp8, "fp8_scaling": scaling}


def published_step_s(run: PublishedRun, s: Scenario, registry: Registry = HARDWARE) -> float:
    """The source's iteration time, or the one its throughput figure implies."""
    m, hw = model_of(s), registry[s.hardware]
    tokens = run.global_batch * m.seq_len
    if run.iteration_s is not None:
        return run.iteration_s
    if run.tokens_per_s_per_gpu is not None:
        return tokens / (run.tokens_per_s_per_gpu * run.gpus)
    if run.tokens_per_s is not None:  # aggregate over all GPUs
        return tokens / run.tokens_per_s
    if run.tflops_per_gpu is not None and run.flop_formula.startswith("Narayanan"):
        # Narayanan et al. 2021 eq. 3 counts the full-recompute forward: hardware FLOPs.
        total = flops.hardware_flops(m, run.global_batch, "full")
        return total / (run.gpus * run.tflops_per_gpu * 1e12)
    if run.mfu is not None:  # Chowdhery et al. 2022 App. B: model FLOPs over peak
        return flops.model_flops(m, run.global_batch) / (run.mfu * run.gpus * hw.peak_tflops * 1e12)
    raise ValueError(f"{run.source}: no figure converts to a step time")


@dataclass(frozen=True)
class Row:
    run: PublishedRun
    reason: str  # why the row is left out; "" when predicted
    published_s: float | None = None
    predicted_s: float | None = None
    baseline_s: float | None = None
    query: dict[str, str] | None = None
    hardware: str = ""
    # Predicted with the GEMM ceiling fitted without this row's source (fit.py); None until
    # fit.fit fills it, or when no other source is left to fit on.
    held_out_s: float | None = None
    held_out_ceiling: float | None = None
    held_out_pool: str | None = None  # "generation" or "all" (fit.py: what it was fitted on)

    @property
    def error(self) -> float | None:
        return None if self.reason else (self.predicted_s - self.published_s) / self.published_s

    @property
    def baseline_error(self) -> float | None:
        return None if self.reason else (self.baseline_s - self.published_s) / self.published_s

    @property
    def held_out_error(self) -> float | None:
        if self.reason or self.held_out_s is None:
            return None
        return (self.held_out_s - self.published_s) / self.published_s


def with_gemm_ceiling(registry: Registry, name: str, ceiling: float) -> Mapping[str, HardwareSpec]:
    """``registry`` with one profile's GEMM ceiling swapped in (the fit's search variable)."""
    table = dict(registry)
    hw = table[name]
    table[name] = replace(hw, efficiency=replace(hw.efficiency, gemm_max_fraction=ceiling))
    return MappingProxyType(table)


class Pricer:
    """One scenario prepared once (checked, laid out, scheduled, placed) and priced at any GEMM
    ceiling of its hardware: what the fit asks of a row many times, without rebuilding its
    actions (evaluate's _staged, whose cost stage is predict.price, minus the views)."""

    def __init__(self, s: Scenario, registry: Registry = HARDWARE) -> None:
        layout, actions, cost = prepare(s, registry)  # raises ScenarioError as evaluate does
        self.step_s: float = cost.sections["step_time_s"]
        self.ceiling = specs.hardware_of(s, registry).efficiency.gemm_max_fraction
        self._s, self._registry, self._layout, self._actions = s, registry, layout, actions
        self._model, self._training = specs.model_of(s), specs.training_of(s)
        self._pipe = pipeline.plan(
            s.schedule, s.pp, s.virtual_stages, self._model.layers, s.layer_split
        )

    def at(self, ceiling: float) -> float:
        """The step time with the hardware's GEMM ceiling at ``ceiling``."""
        registry = with_gemm_ceiling(self._registry, self._s.hardware, ceiling)
        hw = specs.hardware_of(self._s, registry)
        return predict.price(
            self._s, self._model, hw, self._training, self._layout, self._pipe, self._actions
        ).step_s


def priced(run: PublishedRun, registry: Registry = HARDWARE) -> tuple[Row, Pricer | None]:
    """One run predicted with ``registry``'s profiles, and its Pricer (None when left out)."""
    reason = left_out(run)
    if reason:
        return Row(run, reason), None
    s = scenario_of(run)
    try:
        pricer = Pricer(s, registry)
    except ScenarioError as exc:
        return Row(run, f"not expressible: {exc}"), None
    hw = registry[s.hardware]
    model_f = flops.model_flops(model_of(s), run.global_batch)
    baseline = model_f / (run.gpus * hw.peak_tflops * 1e12 * BASELINE_MFU)
    published = published_step_s(run, s, registry)
    return Row(run, "", published, pricer.step_s, baseline, s.query(), s.hardware), pricer


def row(run: PublishedRun, registry: Registry = HARDWARE) -> Row:
    """One run predicted with ``registry``'s profiles (a test or a search may swap one)."""
    return priced(run, registry)[0]


def rows(registry: Registry = HARDWARE) -> list[Row]:
    """Every run predicted in-sample (the shipped constants); fit.board_rows adds held-out."""
    return [row(r, registry) for r in RUNS]


def summary(errors: list[float]) -> dict[str, Any]:
    """Median and max |error| and how many are within 10%."""
    mags = [abs(e) for e in errors]
    if not mags:
        return {"rows": 0, "median_abs": None, "max_abs": None, "within_10pct": 0}
    return {
        "rows": len(mags),
        "median_abs": statistics.median(mags),
        "max_abs": max(mags),
        "within_10pct": sum(x <= 0.10 for x in mags),
    }


def origin(run: PublishedRun) -> str:
    """The independent source a row comes from (papers by first author, frameworks by name):
    what a held-out fit leaves out with the row (fit.py)."""
    return run.source.split(" et al.")[0].split(" (")[0].split(" docs")[0].split(" ")[0]


def source_family(run: PublishedRun) -> str:
    """The family a row is summed in on the board: its origin, a source's mixture-of-experts
    rows apart ("NVIDIA MoE"), as they enter no fit (fit.fits_on); held out, they still leave
    their whole origin out (origin)."""
    return f"{origin(run)} MoE" if run.moe else origin(run)
