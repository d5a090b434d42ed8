"""Published, measured training memory (published_memory.json, read by memory_loader)
against the memory model (app/core/cost/memory.py): each row becomes the scenario its source
describes, is predicted with its hardware profile's one set of constants (nothing is tuned
per row), and is compared on the figure the source measured: torch's peak allocated, its
peak reserved, or nvidia-smi (reserved plus the per-process floor). Every row's out-of-memory
outcome is called too: a published OOM must be predicted not to fit, a run that ran to fit.

Where a row leaves a setting to its framework, ``FRAMEWORKS`` fills it from that framework's
code, and the row says so. Rows the model cannot express (context parallelism, Transformer
Engine FP8, an unpublished micro-batch or sequence length) are kept and say why they are
left out.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from app.core import schedules
from app.core.cost import predict as pricing
from app.core.evaluate import Registry, layout_of, prepare
from app.core.fidelity.memory_frameworks import (  # noqa: F401  (the board's public names)
    FRAMEWORKS,
    LOSS_COMPILED,
    SAC_LEGACY_RS,
    Framework,
    training_change,
)
from app.core.fidelity.memory_loader import MemoryRow, load
from app.core.inputs import specs
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import pipeline
from app.core.views import prediction

GIB = 1 << 30
TARGETS = {"median_abs": 0.05, "max_abs": 0.15}  # the issue's: median <= 5%, max <= 15%

# GPUs the presets lack: their capacity and per-process floor for the memory board only;
# the compute figures are an A100's stand-in, which no memory figure reads.
_STAND_IN = HARDWARE["a100-40g"]
MEMORY_PROFILES: Mapping[str, HardwareSpec] = MappingProxyType({
    name: replace(_STAND_IN, name=name, hbm_gib=hbm, memory_floor_gib=floor, source=source)
    for name, hbm, floor, source in (
        # Hugging Face perf_train_gpu_one (the rows' own page): 1343 MB (MiB) used after a
        # 1x1 tensor on this V100, before the model: the CUDA context with every kernel.
        ("v100-16g", 16.0, 1343 / 1024, "V100 SXM2 16GB datasheet; floor: HF perf_train_gpu_one"),
        ("v100-32g", 32.0, 1343 / 1024, "V100 32GB datasheet; floor: HF perf_train_gpu_one"),
        # CUDA context ~400 MB with lazy loading (pytorch/pytorch #109888) and one NCCL
        # communicator ~688 MB (NVIDIA/nccl #964): 1.0 GiB, the presets' figure.
        ("titan-rtx", 24.0, 1.0, "TITAN RTX datasheet (24 GB GDDR6); floor as the presets"),
        ("a10g", 24.0, 1.0, "NVIDIA A10G (AWS G5, 24 GB GDDR6); floor as the presets"),
        ("rtx-4090", 24.0, 1.0, "GeForce RTX 4090 (24 GB GDDR6X); floor as the presets"),
    )
})  # fmt: skip
REGISTRY: Registry = MappingProxyType({**HARDWARE, **MEMORY_PROFILES})
GPUS = {  # row.gpu -> the registry's name
    "H100 SXM 96GB (HBM2e, 500 W)": "h100-sxm", "H100 (capacity not stated)": "h100-sxm",
    "H100 SXM 80GB": "h100-sxm", "H100 80GB": "h100-sxm", "H200 141GB": "h200",
    "B200 (power limited)": "b200", "A100 80GB": "a100-80g", "A100 SXM 80GB": "a100-80g",
    "H800 80GB": "h800", "V100 SXM2 16GB": "v100-16g", "V100 32GB": "v100-32g",
    "Titan RTX 24GB": "titan-rtx", "A10G 24GB": "a10g", "RTX 4090 24GB": "rtx-4090",
}  # fmt: skip
# Documented measurements the model is not meant to predict, by row id, with the reason.
KNOWN_OUTLIERS = {
    "torchtitan-issue191-13b-dp2-tp4-fsdp2": "a regression the source reports (FSDP2 in 2D, "
    "later fixed); its FSDP1 twin is predicted",
}
# BERT's WordPiece vocabulary (bert-large-uncased, 30,522) where the row leaves it unstated;
# the cased 28,996 moves a prediction by under 1%.
BERT_VOCAB = 30_522


COMPILED = "torch.compile (fused kernels, and from 2025 a compiled loss) is not modelled"


def left_out(row: MemoryRow, compiled_as_eager: bool = False) -> str:
    """Why a row cannot be predicted faithfully, or "" when it can; ``compiled_as_eager``
    predicts torch.compile rows as if they ran eagerly (the bench's second table)."""
    p, m, t = row.parallel, row.model, row.training
    if row.id in KNOWN_OUTLIERS:
        return KNOWN_OUTLIERS[row.id]
    if t.torch_compile and not compiled_as_eager:
        # torchtitan Table 1 and 3: compile alone moves the peak by 5.4 GiB (7-8%).
        return COMPILED
    if "fp8" in t.precision.lower() and "float8" not in t.precision:
        return "Transformer Engine FP8 (FP8 copies of activations and weights) is not modelled"
    if row.framework_family not in FRAMEWORKS:
        return f"no framework defaults for {row.framework_family}"
    if row.gpu not in GPUS:
        return f"no hardware profile for {row.gpu}"
    if p.micro_batch_size is None:
        return "micro-batch size not published"
    if m.ffn_hidden is None or (m.vocab is None and "BERT" not in m.name):
        return "model shape not published (ffn or vocabulary)"
    if m.seq_len is None and row.measured.outcome != "oom":
        return "sequence length not published"
    return ""


def _dtype(precision: str) -> str:
    if precision == "fp32":
        return "fp32"
    return "fp16" if precision.startswith("fp16") else "bf16"  # bf16-true, + float8 linears


def _tied(m: Any, fw: Framework) -> bool:
    """Whether the trained model ties its head: never where the framework unties it."""
    if fw.unties_head:
        return False
    return m.tied_embeddings if m.tied_embeddings is not None else not m.gated_mlp


def _memory(s: Scenario, registry: Registry, change: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's memory section, validated by prepare; with ``change``, priced again
    from the same stages (evaluate.one_scenario._staged) with those Training fields."""
    cost = prepare(s, registry)[2]
    if not change:
        return cost.sections["memory"]
    hw, model = specs.hardware_of(s, registry), specs.model_of(s)
    layout = layout_of(s, hw.gpus_per_node)
    pipe = pipeline.plan(s.schedule, s.pp, s.virtual_stages, model.layers, s.layer_split)
    actions = schedules.build(s.schedule, s.pp, s.microbatches, s.virtual_stages)
    t = replace(specs.training_of(s), **change)
    costed = pricing.price(s, model, hw, t, layout, pipe, actions)
    return prediction.sections(s, model, hw, layout, pipe, costed).sections["memory"]


def scenario_of(row: MemoryRow) -> Scenario:
    """The row's configuration as a scenario. torchao float8 linears are predicted as bf16:
    the rows themselves show the same memory with and without them (torchtitan Table 1:
    77.0 vs 76.8 GiB; Table 3: 62.0 vs 61.8). A published OOM without a sequence length is
    predicted at one token: the lower bound of any length."""
    p, m, t = row.parallel, row.model, row.training
    fw = FRAMEWORKS[row.framework_family]
    accum = fw.grad_accum_fp32
    if accum is None:
        accum = "fp32" in t.grad_dtype
    fused_loss = fw.fused_cross_entropy or bool(
        t.torch_compile and any(c in row.framework for c in LOSS_COMPILED)
    )
    # torchtitan's selective_ac_option 'op' ("per-op SAC"), not Megatron's core_attn.
    op = t.recompute == "selective" and re.search(r"\bop\b", t.recompute_detail or "")
    interleaved = p.pipeline_schedule == "interleaved" and (p.vpp or 1) > 1
    hw = GPUS[row.gpu]
    hbm = row.hbm_gib or (float(row.hbm_gb_nominal) if row.hbm_gb_nominal else None)
    return Scenario(
        model="custom", layers=m.layers, hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads,
        ffn_hidden=m.ffn_hidden, vocab=m.vocab or BERT_VOCAB, seq_len=m.seq_len or 1,
        gated_mlp=m.gated_mlp,
        tied_embeddings=_tied(m, fw),
        learned_positions=m.position_embedding.startswith("learned"),
        dp=p.dp, tp=p.tp, pp=p.pp, cp=p.cp, order="megatron-5d" if p.cp > 1 else "megatron",
        schedule="interleaved" if interleaved else "1f1b",
        virtual_stages=p.vpp if interleaved else 1,
        microbatches=p.num_microbatches or p.grad_accum or 1,
        micro_batch_size=p.micro_batch_size or 1,
        dtype=_dtype(t.precision), zero=p.zero_stage, recompute=t.recompute,
        selective_ac="op" if op else "attention",
        sequence_parallel=bool(p.sequence_parallel),
        flash_attention=t.flash_attention if t.flash_attention is not None else fw.flash_attention,
        grad_accum_fp32=accum, master_weights=not t.master_weights.startswith("none"),
        fused_cross_entropy=fused_loss, dropout=fw.dropout,
        fused_swiglu=fw.fused_swiglu and "legacy" not in row.framework, hardware=hw,
        autocast="AMP" in t.precision, unsharded_grad_accum=fw.no_sync_accum,
        grad_reduce_fp32="fp32 reduce" in t.grad_dtype,
        hbm_gib=hbm if hbm and hbm != REGISTRY[hw].hbm_gib else None,
    )  # fmt: skip


@dataclass(frozen=True)
class MemoryRowResult:
    row: MemoryRow
    reason: str  # why the row is left out; "" when predicted
    figure: str = ""  # what the source measured: allocated, reserved, nvidia-smi; "" = outcome
    measured_gib: float | None = None
    predicted_gib: float | None = None  # the same figure, predicted
    peak_gib: float | None = None  # the predicted total (reserved + floor), what must fit
    capacity_gib: float | None = None
    predicted_fits: bool | None = None
    lower_bound: bool = False  # predicted at one token: the sequence length is not published
    query: dict[str, str] | None = None

    @property
    def error(self) -> float | None:
        if self.reason or self.measured_gib is None or self.predicted_gib is None:
            return None
        return (self.predicted_gib - self.measured_gib) / self.measured_gib

    @property
    def published_oom(self) -> bool:
        return self.row.measured.outcome == "oom"

    @property
    def call_correct(self) -> bool | None:
        if self.reason:
            return None
        return self.predicted_fits == (not self.published_oom)


def _figure(row: MemoryRow) -> tuple[str, float | None]:
    me = row.measured
    if me.outcome == "oom":
        return "", None  # an allocator state at the failing allocation, not a peak
    if me.peak_allocated_gib is not None:
        return "allocated", me.peak_allocated_gib
    if me.peak_reserved_gib is not None:
        return "reserved", me.peak_reserved_gib
    if me.nvidia_smi_gib is not None:
        return "nvidia-smi", me.nvidia_smi_gib
    return "", None


def predict(
    row: MemoryRow, registry: Registry = REGISTRY, compiled_as_eager: bool = False
) -> MemoryRowResult:
    reason = left_out(row, compiled_as_eager)
    if reason:
        return MemoryRowResult(row, reason)
    s = scenario_of(row)
    try:
        mem = _memory(s, registry, training_change(row))
    except ScenarioError as exc:
        return MemoryRowResult(row, f"not expressible: {exc}")
    stages = mem["per_stage"]
    fw = FRAMEWORKS[row.framework_family]
    logged = stages[-1] if fw.stage == "last" else max(stages, key=lambda st: st["total_bytes"])
    figure, measured = _figure(row)
    key = {"allocated": "allocated_bytes", "reserved": "reserved_bytes"}.get(figure, "total_bytes")
    return MemoryRowResult(
        row, "", figure, measured,
        predicted_gib=logged[key] / GIB if figure else None,
        peak_gib=mem["peak_bytes"] / GIB, capacity_gib=mem["capacity_bytes"] / GIB,
        predicted_fits=mem["fits"], lower_bound=row.model.seq_len is None, query=s.query(),
    )  # fmt: skip


def rows(registry: Registry = REGISTRY) -> list[MemoryRowResult]:
    return [predict(r, registry) for r in load()]


def compiled_rows(registry: Registry = REGISTRY) -> list[MemoryRowResult]:
    """The torch.compile rows the board leaves out, predicted as if they ran eagerly."""
    return [predict(r, registry, compiled_as_eager=True) for r in load() if left_out(r) == COMPILED]


def summary(results: list[MemoryRowResult]) -> dict[str, Any]:
    """Median and max |error|, how many within 10%, and the OOM calls (every predicted row's
    fit-or-not, and the published OOMs among them)."""
    errors = [abs(r.error) for r in results if r.error is not None]
    called = [r for r in results if r.call_correct is not None]
    ooms = [r for r in called if r.published_oom]
    return {
        "rows": len(errors),
        "median_abs": statistics.median(errors) if errors else None,
        "max_abs": max(errors) if errors else None,
        "within_10pct": sum(e <= 0.10 for e in errors),
        "calls": len(called),
        "calls_correct": sum(bool(r.call_correct) for r in called),
        "ooms": len(ooms),
        "ooms_called": sum(bool(r.call_correct) for r in ooms),
    }


def meets_targets(s: dict[str, Any]) -> dict[str, bool]:
    return {
        "median_abs": s["median_abs"] is not None and s["median_abs"] <= TARGETS["median_abs"],
        "max_abs": s["max_abs"] is not None and s["max_abs"] <= TARGETS["max_abs"],
        "ooms": s["ooms_called"] == s["ooms"],
        "calls": s["calls_correct"] == s["calls"],
    }


def family(result: MemoryRowResult) -> str:
    return result.row.framework_family
