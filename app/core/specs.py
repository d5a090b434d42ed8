"""Scenario -> the model, hardware and training specs the cost model takes, with checks."""

from __future__ import annotations

from dataclasses import replace

from app.core.costs import Training
from app.core.presets import HARDWARE, MODELS, HardwareSpec, ModelSpec
from app.core.scenario import Scenario, ScenarioError
from app.core.schedules import FORWARD_ONLY

_MODEL_FIELDS = ("layers", "hidden", "heads", "seq_len", "vocab", "ffn_hidden")
_HW_FIELDS = ("peak_tflops", "hbm_gib", "intra_gbps", "inter_gbps")


def model_of(s: Scenario) -> ModelSpec:
    base = MODELS.get(s.model)
    if base is None:
        raise ScenarioError(
            "model", f"unknown model preset {s.model!r}; one of: {', '.join(MODELS)}"
        )
    overrides = {f: getattr(s, f) for f in _MODEL_FIELDS if getattr(s, f) is not None}
    if "hidden" in overrides and "ffn_hidden" not in overrides and not base.gated_mlp:
        overrides["ffn_hidden"] = 4 * overrides["hidden"]
    return replace(base, name=base.name if not overrides else "custom", **overrides)


def hardware_of(s: Scenario) -> HardwareSpec:
    base = HARDWARE.get(s.hardware)
    if base is None:
        known = ", ".join(HARDWARE)
        raise ScenarioError("hardware", f"unknown hardware preset {s.hardware!r}; one of: {known}")
    overrides = {f: getattr(s, f) for f in _HW_FIELDS if getattr(s, f) is not None}
    if s.gpus_per_node is not None:
        overrides["gpus_per_node"] = s.gpus_per_node
    return replace(base, **overrides)


def training_of(s: Scenario) -> Training:
    return Training(
        micro_batch_size=s.micro_batch_size,
        microbatches=s.microbatches,
        dtype=s.dtype,
        zero=s.zero,
        recompute=s.recompute,
        sequence_parallel=s.sequence_parallel,
        forward_only=s.schedule in FORWARD_ONLY,
    )


def check_model(s: Scenario, m: ModelSpec) -> None:
    """Shapes Megatron-style TP and PP can split, each reported against one field."""
    slices = s.pp * s.chunks
    if m.layers < slices or (s.chunks > 1 and m.layers % slices):
        field = "virtual_stages" if s.chunks > 1 else "pp"
        raise ScenarioError(
            field,
            f"layers ({m.layers}) must divide evenly into pp*chunks = {s.pp}*{s.chunks}"
            if s.chunks > 1
            else f"layers ({m.layers}) must be at least pp ({s.pp}): every stage needs one",
        )
    if m.hidden % m.heads:
        raise ScenarioError("heads", f"hidden ({m.hidden}) must be divisible by heads ({m.heads})")
    if m.heads % s.tp:
        raise ScenarioError("tp", f"heads ({m.heads}) must be divisible by tp ({s.tp})")
    if m.ffn_hidden % s.tp:
        raise ScenarioError("tp", f"ffn_hidden ({m.ffn_hidden}) must be divisible by tp ({s.tp})")
    if s.sequence_parallel and m.seq_len % s.tp:
        raise ScenarioError(
            "sequence_parallel", f"seq_len ({m.seq_len}) must be divisible by tp ({s.tp})"
        )
