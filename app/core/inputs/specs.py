"""Scenario -> the model, hardware and training specs the cost model takes, with checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from app.core.inputs.presets import HARDWARE, MODELS, HardwareSpec, ModelSpec
from app.core.inputs.scenario import ARCH_FIELDS, CUSTOM_MODEL, Scenario, ScenarioError
from app.core.inputs.training import Training
from app.core.schedules import FORWARD_ONLY, stages_per_copy

_HW_FIELDS = ("peak_tflops", "hbm_gib", "intra_gbps", "inter_gbps")


def custom_model(s: Scenario) -> ModelSpec:
    """A model from its shape alone, with Megatron GPT's defaults for what is not given."""
    for f in ("layers", "hidden", "heads"):
        if getattr(s, f) is None:
            raise ScenarioError(f, f"a custom model needs layers, hidden and heads; {f} is missing")
    given = {f: getattr(s, f) for f in ARCH_FIELDS if getattr(s, f) is not None}
    # Megatron-LM arguments.py: ffn_hidden_size defaults to 4h and num_query_groups to heads;
    # GPT-2 BPE padded to 51,200 and seq 2,048 as in Narayanan et al. 2021 §5.1.
    defaults = {"seq_len": 2048, "vocab": 51_200, "ffn_hidden": 4 * s.hidden}
    return ModelSpec(name=CUSTOM_MODEL, **(defaults | given))


def model_of(s: Scenario) -> ModelSpec:
    if s.model == CUSTOM_MODEL:
        return custom_model(s)
    base = MODELS.get(s.model)
    if base is None:
        known = ", ".join([*MODELS, CUSTOM_MODEL])
        raise ScenarioError("model", f"unknown model preset {s.model!r}; one of: {known}")
    overrides = {f: getattr(s, f) for f in ARCH_FIELDS if getattr(s, f) is not None}
    if "hidden" in overrides and "ffn_hidden" not in overrides and not base.gated_mlp:
        overrides["ffn_hidden"] = 4 * overrides["hidden"]
    return replace(base, name=base.name if not overrides else CUSTOM_MODEL, **overrides)


def hardware_of(s: Scenario, registry: Mapping[str, HardwareSpec] = HARDWARE) -> HardwareSpec:
    """The scenario's hardware from the registry (the server's presets plus loaded profiles),
    with the scenario's overrides applied."""
    base = registry.get(s.hardware)
    if base is None:
        known = ", ".join(registry)
        raise ScenarioError("hardware", f"unknown hardware preset {s.hardware!r}; one of: {known}")
    overrides = {f: getattr(s, f) for f in _HW_FIELDS if getattr(s, f) is not None}
    if s.gpus_per_node is not None:
        overrides["gpus_per_node"] = s.gpus_per_node
    if "peak_tflops" in overrides and base.fp32_tflops:
        # A faster or slower part of the same design keeps its TF32 : 16-bit ratio.
        overrides["fp32_tflops"] = base.fp32_tflops * overrides["peak_tflops"] / base.peak_tflops
    return replace(base, **overrides)


def training_of(s: Scenario) -> Training:
    if s.recompute_layers is not None and s.recompute != "full":
        # Megatron-LM arguments.py: --recompute-num-layers goes with full granularity.
        raise ScenarioError("recompute_layers", "needs recompute=full: it counts the layers of "
                            "each chunk that full recompute covers")  # fmt: skip
    return Training(
        micro_batch_size=s.micro_batch_size,
        microbatches=s.microbatches,
        dtype=s.dtype,
        zero=s.zero,
        recompute=s.recompute,
        sequence_parallel=s.sequence_parallel,
        forward_only=s.schedule in FORWARD_ONLY,
        flash_attention=s.flash_attention,
        overlap_grad_reduce=s.overlap_grad_reduce,
        overlap_param_gather=s.overlap_param_gather,
        tp_comm_overlap=s.tp_comm_overlap,
        recompute_layers=s.recompute_layers,
        grad_reduce_fp32=s.grad_reduce_fp32,
        zero3_per_tensor=s.zero3_per_tensor,
    )


def check_model(s: Scenario, m: ModelSpec) -> None:
    """Shapes Megatron-style TP and PP can split, each reported against one field. Any layer
    count splits over pp*chunks virtual stages as long as each gets one (Dubey et al. 2024
    §3.3.2 ran Llama 3 405B's 126 layers on 16 stages, unevenly)."""
    slices = stages_per_copy(s.schedule, s.pp, s.chunks)  # DualPipe: a copy's p stages
    given = s.layer_split
    if given is not None and sum(given) != m.layers:
        raise ScenarioError(
            "stage_layers",
            f"sum vs layers: the entries sum to {sum(given)} but the model has {m.layers} layers",
        )
    if m.layers < slices and slices == s.pp and s.chunks > 1:
        raise ScenarioError(
            "pp", f"layers ({m.layers}) must be at least pp = {s.pp}: each copy's stages need one"
        )
    if m.layers < slices:
        raise ScenarioError(
            "virtual_stages" if s.chunks > 1 else "pp",
            f"layers ({m.layers}) must be at least pp*chunks = {s.pp}*{s.chunks}: every "
            "virtual stage needs one",
        )
    if m.hidden % m.heads:
        raise ScenarioError("heads", f"hidden ({m.hidden}) must be divisible by heads ({m.heads})")
    if m.kv_heads is not None and (m.kv_heads > m.heads or m.heads % m.kv_heads):
        raise ScenarioError(
            "kv_heads", f"heads ({m.heads}) must be a multiple of kv_heads ({m.kv_heads})"
        )
    if m.heads % s.tp:
        raise ScenarioError("tp", f"heads ({m.heads}) must be divisible by tp ({s.tp})")
    if m.ffn_hidden % s.tp:
        raise ScenarioError("tp", f"ffn_hidden ({m.ffn_hidden}) must be divisible by tp ({s.tp})")
    if s.sequence_parallel and m.seq_len % s.tp:
        raise ScenarioError(
            "sequence_parallel", f"seq_len ({m.seq_len}) must be divisible by tp ({s.tp})"
        )
