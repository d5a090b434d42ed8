"""Scenario -> the model, hardware and training specs the cost model takes, with checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from app.core.inputs.presets import HARDWARE, MODELS, HardwareSpec, ModelSpec
from app.core.inputs.scenario import (
    ARCH_FIELDS,
    CUSTOM_MODEL,
    MOE_FIELDS,
    Scenario,
    ScenarioError,
)
from app.core.inputs.training import Training
from app.core.schedules import FORWARD_ONLY, stages_per_copy
from app.core.support.echo import echo

_HW_FIELDS = ("peak_tflops", "hbm_gib", "intra_gbps", "inter_gbps")


def custom_model(s: Scenario) -> ModelSpec:
    """A model from its shape alone, with Megatron GPT's defaults for what is not given."""
    for f in ("layers", "hidden", "heads"):
        if getattr(s, f) is None:
            raise ScenarioError.keyed(
                f, "scenario.custom_missing",
                "a custom model needs layers, hidden and heads; {name} is missing (a shape "
                "field such as seq_len without model= means model=custom: name the preset to "
                "change its shape, e.g. model=llama3-8b&seq_len=4096)", name=f,
            )  # fmt: skip
    given = {f: getattr(s, f) for f in ARCH_FIELDS + MOE_FIELDS if getattr(s, f) is not None}
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
        raise ScenarioError.keyed(
            "model", "scenario.model_unknown", "unknown model preset {model}; one of: {known}",
            model=echo(s.model), known=known,
        )  # fmt: skip
    overrides = {f: getattr(s, f) for f in ARCH_FIELDS + MOE_FIELDS if getattr(s, f) is not None}
    if "hidden" in overrides and "ffn_hidden" not in overrides and not base.gated_mlp:
        overrides["ffn_hidden"] = 4 * overrides["hidden"]
    return replace(base, name=base.name if not overrides else CUSTOM_MODEL, **overrides)


def hardware_of(s: Scenario, registry: Mapping[str, HardwareSpec] = HARDWARE) -> HardwareSpec:
    """The scenario's hardware from the registry (the server's presets plus loaded profiles),
    with the scenario's overrides applied."""
    base = registry.get(s.hardware)
    if base is None:
        known = ", ".join(registry)
        raise ScenarioError.keyed(
            "hardware", "scenario.hardware_unknown",
            "unknown hardware preset {hardware}; one of: {known}",
            hardware=echo(s.hardware), known=known,
        )  # fmt: skip
    overrides = {f: getattr(s, f) for f in _HW_FIELDS if getattr(s, f) is not None}
    if overrides.get("hbm_gib", base.hbm_gib) <= base.memory_floor_gib:
        raise ScenarioError.keyed(
            "hbm_gib", "scenario.hbm_floor",
            "{hbm} GiB is not above {name}'s per-process memory floor ({floor} GiB)",
            hbm=s.hbm_gib, name=base.name, floor=base.memory_floor_gib,
        )  # fmt: skip
    if s.gpus_per_node is not None:
        overrides["gpus_per_node"] = s.gpus_per_node
    if "peak_tflops" in overrides and base.fp32_tflops:
        # A faster or slower part of the same design keeps its TF32 : 16-bit ratio.
        overrides["fp32_tflops"] = base.fp32_tflops * overrides["peak_tflops"] / base.peak_tflops
    if "peak_tflops" in overrides and base.fp8_tflops:  # so does its FP8 : 16-bit ratio
        overrides["fp8_tflops"] = base.fp8_tflops * overrides["peak_tflops"] / base.peak_tflops
    hw = replace(base, **overrides)
    check_fp8(s, hw)
    return hw


def check_fp8(s: Scenario, hw: HardwareSpec) -> None:
    """An FP8 recipe needs FP8 tensor cores (Hopper, Ada, Blackwell, MI300; Micikevicius et
    al. 2022 §1), and MXFP8 Blackwell's hardware block scaling (OCP Microscaling spec v1.0;
    Transformer Engine's MXFP8BlockScaling runs on SM100 only)."""
    if s.fp8 == "none":
        return
    if not hw.fp8_tflops:
        raise ScenarioError.keyed(
            "fp8", "scenario.fp8_hardware",
            "{hardware} has no FP8 tensor cores, so FP8 recipe {recipe} cannot run on it; "
            "use fp8=none, or FP8 hardware (H100, H200, B200, MI300X, L40S)",
            hardware=hw.name, recipe=s.fp8,
        )  # fmt: skip
    if s.fp8 == "mxfp8" and not hw.mxfp8:
        raise ScenarioError.keyed(
            "fp8", "scenario.mxfp8_hardware",
            "{hardware} has no MX block scaling in hardware: MXFP8 needs Blackwell (B200, "
            "GB200); use tensorwise or blockwise", hardware=hw.name,
        )  # fmt: skip


def training_of(s: Scenario) -> Training:
    if s.recompute_layers is not None and s.recompute != "full":
        # Megatron-LM arguments.py: --recompute-num-layers goes with full granularity.
        raise ScenarioError.keyed("recompute_layers", "scenario.recompute_layers_full",
                                  "needs recompute=full: it counts the layers of "
                                  "each chunk that full recompute covers")  # fmt: skip
    if s.selective_ac != "attention" and s.recompute != "selective":
        raise ScenarioError.keyed(
            "selective_ac", "scenario.selective_ac",
            "{value} needs recompute=selective: it says what selective recompute recomputes",
            value=repr(s.selective_ac),
        )  # fmt: skip
    if s.fp8 == "none" and (s.fp8_scaling != "delayed" or s.fp8_param_gather):
        field = "fp8_param_gather" if s.fp8_param_gather else "fp8_scaling"
        raise ScenarioError.keyed(
            field, "scenario.fp8_needs_recipe",
            "{field} needs an FP8 recipe: set fp8=tensorwise, blockwise or mxfp8", field=field,
        )  # fmt: skip
    if s.fp8_scaling != "delayed" and s.fp8 != "tensorwise":
        # Delayed or current scaling is a choice of one scale per tensor; block scales are
        # always computed from the block itself (DeepSeek-V3 §3.3.1; OCP MX spec §5).
        raise ScenarioError.keyed(
            "fp8_scaling", "scenario.fp8_scaling_tensorwise",
            "fp8_scaling chooses how a tensorwise scale is found; {recipe} computes its block "
            "scales from each block", recipe=s.fp8,
        )  # fmt: skip
    return Training(
        micro_batch_size=s.micro_batch_size,
        microbatches=s.microbatches,
        dtype=s.dtype,
        zero=s.zero,
        recompute=s.recompute,
        sequence_parallel=s.sequence_parallel and s.tp > 1,
        forward_only=s.schedule in FORWARD_ONLY,
        flash_attention=s.flash_attention,
        flash_kernel=s.flash_kernel,
        pp_scatter_gather=s.pp_scatter_gather,
        vocab_multiple=s.vocab_multiple,
        overlap_grad_reduce=s.overlap_grad_reduce,
        overlap_param_gather=s.overlap_param_gather,
        tp_comm_overlap=s.tp_comm_overlap,
        recompute_layers=s.recompute_layers,
        grad_reduce_fp32=s.grad_reduce_fp32,
        zero3_per_tensor=s.zero3_per_tensor,
        grad_accum_fp32=s.grad_accum_fp32,
        master_weights=s.master_weights,
        fused_cross_entropy=s.fused_cross_entropy,
        selective_ac=s.selective_ac,
        fused_swiglu=s.fused_swiglu,
        dropout=s.dropout,
        autocast=s.autocast,
        unsharded_grad_accum=s.unsharded_grad_accum,
        cp=s.cp,
        cp_comm=s.cp_comm,
        etp=s.etp,
        dp_shard=s.dp_shard,
        fp8=s.fp8,
        fp8_scaling=s.fp8_scaling,
        fp8_param_gather=s.fp8_param_gather,
    )


def tp_splits(m: ModelSpec, tp: int) -> bool:
    """Whether Megatron-style TP can split the model's heads, KV heads and MLP over ``tp``
    (check_model says which one fails and why; the planner only needs yes or no)."""
    return not (m.heads % tp or (m.kv_heads or m.heads) % tp or m.ffn_hidden % tp)


def check_model(s: Scenario, m: ModelSpec) -> None:
    """Shapes Megatron-style TP and PP can split, each reported against one field. Any layer
    count splits over pp*chunks virtual stages as long as each gets one (Dubey et al. 2024
    §3.3.2 ran Llama 3 405B's 126 layers on 16 stages, unevenly)."""
    slices = stages_per_copy(s.schedule, s.pp, s.chunks)  # DualPipe: a copy's p stages
    given = s.layer_split
    if given is not None and sum(given) != m.layers:
        raise ScenarioError.keyed(
            "stage_layers", "scenario.stage_layers_sum",
            "sum vs layers: the entries sum to {total} but the model has {layers} layers",
            total=sum(given), layers=m.layers,
        )  # fmt: skip
    if m.layers < slices and slices == s.pp and s.chunks > 1:
        raise ScenarioError.keyed(
            "pp", "scenario.layers_pp",
            "layers ({layers}) must be at least pp = {pp}: each copy's stages need one",
            layers=m.layers, pp=s.pp,
        )  # fmt: skip
    if m.layers < slices:
        raise ScenarioError.keyed(
            "virtual_stages" if s.chunks > 1 else "pp", "scenario.layers_vs",
            "layers ({layers}) must be at least pp*chunks = {pp}*{chunks}: every "
            "virtual stage needs one",
            layers=m.layers, pp=s.pp, chunks=s.chunks,
        )  # fmt: skip
    if m.hidden % m.heads and not m.head_dim:
        raise ScenarioError.keyed(
            "heads", "scenario.hidden_heads",
            "hidden ({hidden}) must be divisible by heads ({heads})",
            hidden=m.hidden, heads=m.heads,
        )  # fmt: skip
    if m.kv_heads is not None and (m.kv_heads > m.heads or m.heads % m.kv_heads):
        raise ScenarioError.keyed(
            "kv_heads", "scenario.heads_kv",
            "heads ({heads}) must be a multiple of kv_heads ({kv_heads})",
            heads=m.heads, kv_heads=m.kv_heads,
        )  # fmt: skip
    if m.heads % s.tp:
        raise ScenarioError.keyed(
            "tp", "scenario.heads_tp", "heads ({heads}) must be divisible by tp ({tp})",
            heads=m.heads, tp=s.tp,
        )  # fmt: skip
    if m.kv_heads is not None and m.kv_heads % s.tp:
        # Megatron-LM megatron/core/transformer/attention.py: divide(num_query_groups, tp)
        # asserts; each TP rank holds whole KV heads, none is replicated.
        raise ScenarioError.keyed(
            "tp", "scenario.kv_heads_tp",
            "kv_heads ({kv_heads}) must be divisible by tp ({tp}): Megatron gives each TP "
            "rank whole KV heads", kv_heads=m.kv_heads, tp=s.tp,
        )  # fmt: skip
    if m.ffn_hidden % s.tp:
        raise ScenarioError.keyed(
            "tp", "scenario.ffn_tp", "ffn_hidden ({ffn_hidden}) must be divisible by tp ({tp})",
            ffn_hidden=m.ffn_hidden, tp=s.tp,
        )  # fmt: skip
    check_moe(s, m)
    if s.sequence_parallel and s.tp > 1 and m.seq_len % s.tp:
        raise ScenarioError.keyed(
            "sequence_parallel", "scenario.seq_tp",
            "seq_len ({seq_len}) must be divisible by tp ({tp}) for sequence parallelism (on "
            "by default when tp > 1); or set sequence_parallel=false", seq_len=m.seq_len, tp=s.tp,
        )  # fmt: skip


def check_expert_axes(s: Scenario, m: ModelSpec) -> None:
    """ep and etp only on a mixture of experts (asked before the expert grid's folding
    rules, parallel_axes.check_axes, which would otherwise speak of a grid that is not)."""
    if m.experts or (s.ep == 1 and s.etp in (None, s.tp)):  # etp = tp: the default
        return
    # Megatron-LM arguments.py: "num_experts must be non None to use expert model
    # parallelism"; a dense model has no expert grid to split.
    field = "ep" if s.ep > 1 else "etp"
    raise ScenarioError.keyed(
        field, "scenario.ep_dense",
        "{field} ({value}) needs a mixture of experts: this model has no experts to split",
        field=field, value=s.ep if s.ep > 1 else s.etp,
    )  # fmt: skip


def check_moe(s: Scenario, m: ModelSpec) -> None:
    """A mixture of experts the router and Megatron's expert grid can run, and the
    routing-imbalance knob within what top-k routing allows."""
    check_expert_axes(s, m)
    if not m.experts:
        return
    if not 1 <= m.top_k <= m.experts:
        # Megatron-LM transformer_config.py: moe_router_topk among num_moe_experts.
        raise ScenarioError.keyed(
            "top_k", "scenario.top_k_experts",
            "top_k ({top_k}) must be between 1 and experts ({experts}): each token picks "
            "top_k of the experts", top_k=m.top_k, experts=m.experts,
        )  # fmt: skip
    if m.experts % s.ep:
        # Megatron-LM moe_layer.py: num_local_experts = num_moe_experts // ep_size, asserted.
        raise ScenarioError.keyed(
            "ep", "scenario.ep_experts",
            "ep ({ep}) must divide experts ({experts}): each expert-parallel rank holds "
            "experts/ep whole experts (Megatron)", ep=s.ep, experts=m.experts,
        )  # fmt: skip
    etp = s.etp or s.tp  # Megatron experts.py: divide(moe_ffn_hidden_size, expert TP size)
    if m.moe_width % etp:
        field = "etp" if s.etp else "tp"
        raise ScenarioError.keyed(
            field, f"scenario.expert_ffn_{field}",
            "expert_ffn ({ffn}) must be divisible by " + field + " ({tp}): expert tensor "
            "parallelism splits each expert as TP splits the MLP", ffn=m.moe_width, tp=etp,
        )  # fmt: skip
    if not m.moe_layers:
        raise ScenarioError.keyed(
            "first_dense_layers", "scenario.moe_layers",
            "no layer is left for the experts: first_dense_layers ({first}) and moe_every "
            "({every}) leave none of the {layers} layers",
            first=m.first_dense_layers, every=m.moe_every, layers=m.layers,
        )  # fmt: skip
    if s.routing_imbalance > m.experts / m.top_k:
        # The busiest expert gets at most every token once: share <= 1/top_k of the
        # top_k x tokens assignments, i.e. experts/top_k times the mean.
        raise ScenarioError.keyed(
            "routing_imbalance", "scenario.routing_imbalance",
            "routing_imbalance ({x}) must be at most experts/top_k = {limit}: the busiest "
            "expert can take every token once, no more", x=s.routing_imbalance,
            limit=round(m.experts / m.top_k, 3),
        )  # fmt: skip
