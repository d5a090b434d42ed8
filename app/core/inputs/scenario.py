"""Scenario: everything a user can set, validated. One scenario in, one view model out."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.core.inputs.scenario_fields import (
    _ONE_TIME,
    MAX_LAYERS,
    TIME_LIST,
    TIME_LOW,
    _finite,
    as_field_error,
    check_time_length,
    parse_layer_list,
    parse_time_list,
)
from app.core.inputs.scenario_fields import ScenarioError as ScenarioError  # its callers' home
from app.core.inputs.training import Fp8Recipe
from app.core.layout.topology import ORDER_PRESETS, parse_order
from app.core.schedules import ScheduleName, chunks_per_rank
from app.core.support.echo import echo

MAX_WORLD = 65_536
CUSTOM_MODEL = "custom"
# Fields that describe a model's shape: given without ``model=``, they describe a new model,
# never a silent edit of the default preset (whose SwiGLU and 8 KV heads they would inherit).
ARCH_FIELDS = (
    "layers", "hidden", "heads", "kv_heads", "seq_len", "vocab", "ffn_hidden",
    "gated_mlp", "tied_embeddings", "learned_positions",
)  # fmt: skip
# A mixture of experts' shape (issue 27): with model=, they edit the preset; a Hugging Face
# import of an MoE config.json sets them beside ARCH_FIELDS.
MOE_FIELDS = ("experts", "top_k", "expert_ffn", "shared_experts", "moe_every", "first_dense_layers")
# A bound on simulated work so one request stays well under a second (p=64, m=512, v=4 fits).
MAX_SIMULATED_ACTIONS = 64 * 512 * 4 * 3


class Scenario(BaseModel):
    """The URL's query parameters. Optional model/hardware fields override the preset."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    dp: int = Field(2, ge=1, le=MAX_WORLD, description="data-parallel replicas")
    tp: int = Field(2, ge=1, le=MAX_WORLD, description="tensor-parallel shards per layer")
    pp: int = Field(2, ge=1, le=MAX_WORLD, description="pipeline stages")
    cp: int = Field(1, ge=1, le=MAX_WORLD, description="context-parallel ranks per sequence")
    ep: int = Field(1, ge=1, le=MAX_WORLD, description="expert-parallel ranks, over dp x cp")
    etp: int | None = Field(
        None, ge=1, le=MAX_WORLD,
        description="expert tensor-parallel size (Megatron's --expert-tensor-parallel-size): "
        "etp x ep folds over tp x cp x dp; default: tp",
    )  # fmt: skip
    cp_comm: Literal["p2p", "allgather", "a2a"] = Field(
        "p2p",
        description="how CP ranks exchange K/V: p2p ring, allgather (Llama 3) or a2a "
        "(Ulysses: heads/tp must split over cp), as Megatron's --cp-comm-type",
    )
    order: str = Field("tp-pp-dp", description="rank order, fastest axis first, or a preset")
    gpus_per_node: int | None = Field(None, ge=1, le=1024, description="default: hardware's")
    schedule: ScheduleName = ScheduleName.one_f_one_b
    microbatches: int = Field(4, ge=1, le=4096)
    virtual_stages: int = Field(1, ge=1, le=64, description="model chunks per rank")
    model: str = Field(
        "llama3-8b",
        description="model preset, or 'custom': a Megatron GPT from layers, hidden and heads "
        "(ffn 4h, kv_heads = heads, vocab 51,200, seq 2,048 unless given). Shape fields "
        "without model= mean 'custom'.",
    )
    layers: int | None = Field(None, ge=1, le=MAX_LAYERS)
    hidden: int | None = Field(None, ge=1, le=1 << 17)
    heads: int | None = Field(None, ge=1, le=1024)
    kv_heads: int | None = Field(None, ge=1, le=1024, description="grouped-query KV heads")
    seq_len: int | None = Field(None, ge=1, le=1 << 20)
    vocab: int | None = Field(None, ge=1, le=1 << 22)
    ffn_hidden: int | None = Field(None, ge=1, le=1 << 19)
    gated_mlp: bool | None = Field(None, description="SwiGLU MLP (three h x ffn matrices)")
    tied_embeddings: bool | None = Field(None, description="output head tied to the embedding")
    learned_positions: bool | None = Field(None, description="GPT position table (not RoPE)")
    experts: int | None = Field(None, ge=0, le=4096, description="routed experts (0: dense)")
    top_k: int | None = Field(None, ge=1, le=4096, description="experts each token is routed to")
    expert_ffn: int | None = Field(None, ge=1, le=1 << 19, description="one expert's ffn width")
    shared_experts: int | None = Field(None, ge=0, le=64, description="always-on experts")
    moe_every: int | None = Field(None, ge=1, le=MAX_LAYERS, description="MoE every Nth layer")
    first_dense_layers: int | None = Field(None, ge=0, le=MAX_LAYERS, description="dense first")
    routing_imbalance: float = Field(
        1.0, ge=1.0, le=4096.0, description="the busiest expert's tokens over the mean (MoE)"
    )
    stage_layers: str | None = Field(
        None,
        max_length=8 * MAX_LAYERS,
        description="layers of each virtual stage in pipeline order, comma-separated "
        "(e.g. 31,32,32,31): pp*chunks entries, each >= 1, summing to the model's layers. "
        "Default: an even split, the remainder on the middle stages.",
    )
    micro_batch_size: int = Field(1, ge=1, le=4096)
    dtype: Literal["bf16", "fp16", "fp32"] = "bf16"
    zero: int = Field(0, ge=0, le=3)
    dp_shard: int | None = Field(
        None,
        ge=1,
        le=MAX_WORLD,
        description="HSDP: the data-parallel ranks of each FSDP shard "
        "group (zero=3), the rest replicas that all-reduce; default: all of dp (plain FSDP)",
    )
    # Selective by default: FlashAttention-era training never stores the s x s scores, which
    # is what Korthikanti et al. 2022's selective recompute drops from the activations.
    recompute: Literal["none", "selective", "full"] = "selective"
    # On by default, as Megatron-LM and NeMo recipes run TP; Megatron's arguments.py turns it
    # off at tp = 1, and so does training_of.
    sequence_parallel: bool = Field(
        True, description="sequence parallelism: norm and dropout activations split over TP"
    )
    flash_attention: bool = Field(True, description="FlashAttention: no s x s scores in HBM")
    flash_kernel: Literal["fa2", "fa1"] = Field(
        "fa2", description="FlashAttention-2, or FlashAttention-1 (and its Triton port): "
        "about half as fast (Dao 2023)",
    )  # fmt: skip
    vocab_multiple: int = Field(
        128, ge=1, le=65_536, description="vocabulary padded to a multiple of this x tp "
        "(Megatron's --make-vocab-size-divisible-by); 1: no padding (torchtitan, HF)",
    )  # fmt: skip
    pp_scatter_gather: bool = Field(
        True, description="without SP, each TP rank sends 1/t of a stage's activation and the "
        "next stage all-gathers it (Megatron); off: every TP rank sends all of it",
    )  # fmt: skip
    overlap_grad_reduce: bool = Field(False, description="DP gradient sync under the backward")
    overlap_param_gather: bool = Field(False, description="ZeRO-3 gathers prefetched")
    tp_comm_overlap: bool = Field(
        False, description="TP collectives pipelined with their GEMMs (needs sequence_parallel)"
    )
    recompute_layers: int | None = Field(None, ge=0, le=MAX_LAYERS, description="full: N/chunk")
    grad_reduce_fp32: bool = Field(False, description="gradients reduced in fp32 (torchtitan)")
    zero3_per_tensor: bool = Field(False, description="ZeRO-3 gathers per tensor (DeepSpeed)")
    grad_accum_fp32: bool = Field(
        True, description="fp32 gradient buffer, Megatron's main_grad (off: 16-bit .grad)"
    )
    master_weights: bool = Field(
        True, description="fp32 master weights and Adam moments (off: pure 16-bit training)"
    )
    fused_cross_entropy: bool = Field(
        True, description="Megatron's in-place fp32 loss (off: logits.float(), F.cross_entropy)"
    )
    selective_ac: Literal["attention", "op"] = Field(
        "attention", description="selective recompute: core attention, or torchtitan's per-op"
    )
    fused_swiglu: bool = Field(
        True, description="Megatron's fused SwiGLU keeps its input only (off: eager SiLU * up)"
    )
    dropout: bool | None = Field(
        None, description="dropout masks kept (default: GeLU models yes, gated-MLP models no)"
    )
    autocast: bool = Field(
        False, description="torch.autocast mixed precision: softmax and norms kept in fp32 (HF)"
    )
    unsharded_grad_accum: bool = Field(
        False, description="ZeRO-2/3 accumulation under no_sync: full gradients between "
        "micro-batches (FSDP no_sync, Lightning); off: reduce-scatter every backward",
    )  # fmt: skip
    fp8: Fp8Recipe = Field(
        "none", description="FP8 linear layers: none (16-bit), tensorwise, blockwise "
        "(1x128/128x128 scales) or mxfp8 (Blackwell); needs FP8 hardware",
    )  # fmt: skip
    fp8_scaling: Literal["delayed", "current"] = Field(
        "delayed", description="tensorwise scales from the amax history (delayed, TE's "
        "default) or from each tensor (current)",
    )  # fmt: skip
    fp8_param_gather: bool = Field(
        False, description="ZeRO-3 / FSDP gathers weights in FP8 (torchao, Megatron)"
    )
    hardware: str = Field("h100-sxm", description="hardware preset")
    peak_tflops: float | None = Field(None, ge=1e-3, le=1e6)
    hbm_gib: float | None = Field(None, ge=1e-3, le=1e5)
    intra_gbps: float | None = Field(None, ge=1e-3, le=1e6)
    inter_gbps: float | None = Field(None, ge=1e-3, le=1e6)
    # Teaching durations: one number, or a comma list (a str, kept in its canonical spelling).
    f_time: str | float | None = Field(None, description="teaching: F per chunk. " + TIME_LIST)
    b_time: str | float | None = Field(None, description="teaching: input-grad B. " + TIME_LIST)
    w_time: str | float | None = Field(None, description="teaching: weight-grad W. " + TIME_LIST)
    p2p_time: float | None = Field(None, ge=0, le=1e6, description="teaching: p2p hop")
    fb_time: float | None = Field(
        None, gt=0, le=1e6, description="teaching: one overlapped F&B pair (DualPipe(V))"
    )

    @model_validator(mode="before")
    @classmethod
    def _shape_without_model_is_custom(cls, data: object) -> object:
        shaped = isinstance(data, dict) and any(data.get(f) is not None for f in ARCH_FIELDS)
        if shaped and "model" not in data:
            return {**data, "model": CUSTOM_MODEL}
        return data

    @field_validator(
        "peak_tflops",
        "hbm_gib",
        "intra_gbps",
        "inter_gbps",
        "p2p_time",
    )
    @classmethod
    def _is_finite(cls, value: float | None) -> float | None:
        return _finite(value)

    @field_validator("f_time", "b_time", "w_time", mode="before")
    @classmethod
    def _time_or_list(cls, value: object, info: ValidationInfo) -> float | str | None:
        """One number as a float field would take it; a list -> its canonical spelling."""
        name = str(info.field_name)
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        if not (isinstance(value, str) and "," in value):
            try:
                return None if value is None else _ONE_TIME[name].validate_python(value)
            except ValidationError as exc:
                e = exc.errors()[0]
                raise PydanticCustomError(e["type"], e["msg"], e.get("ctx")) from None
        d = info.data
        try:
            entries = parse_time_list(value, dict(TIME_LOW)[name], name)
            if {"pp", "schedule", "virtual_stages"} <= d.keys():  # else their own errors
                chunks = chunks_per_rank(d["schedule"], d["virtual_stages"])
                check_time_length(name, len(entries), d["pp"], chunks)
        except ValueError as exc:
            raise as_field_error(exc, "time_list") from None
        return ",".join(str(v) for v in entries)

    @field_validator("stage_layers", mode="before")
    @classmethod
    def _layer_list(cls, value: object) -> str | None:
        """A comma-separated list (or a list from Python) -> its canonical spelling."""
        if value is None:
            return None
        if isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        if not isinstance(value, str):
            raise PydanticCustomError(
                "scenario.layer_list", "must be comma-separated layer counts, e.g. 31,32,32,31"
            )
        try:
            return ",".join(str(n) for n in parse_layer_list(value))
        except ValueError as exc:
            raise as_field_error(exc, "layer_list") from None

    @field_validator("order")
    @classmethod
    def _known_order(cls, value: str) -> str:
        try:
            return "-".join(parse_order(value))
        except ValueError as exc:  # the layout's English reason, keyed for other languages
            presets = ", ".join(ORDER_PRESETS)
            raise PydanticCustomError(
                "scenario.order", str(exc), {"order": echo(value), "presets": presets}
            ) from None

    @property
    def world_size(self) -> int:
        # tp x cp x pp x dp: ep adds no ranks, it folds over dp x cp (app/core/layout/mesh.py)
        return self.dp * self.tp * self.pp * self.cp

    @property
    def layer_split(self) -> tuple[int, ...] | None:
        """stage_layers as numbers, or None for the default split."""
        return None if self.stage_layers is None else parse_layer_list(self.stage_layers)

    def times(self, field: str) -> tuple[float, ...] | None:
        """f_time, b_time or w_time as numbers: one entry, or the list; None when not given."""
        value = getattr(self, field)
        if value is None:
            return None
        return parse_time_list(value, 0.0) if isinstance(value, str) else (value,)

    @property
    def chunks(self) -> int:
        return chunks_per_rank(self.schedule, self.virtual_stages)

    def query(self) -> dict[str, str]:
        """The non-default fields as URL query values: the share link. The model is named even
        when it is the default once a shape field is set: a shape field without model= reads
        as model=custom, which would open a different model."""
        out = {}
        for key, value in self.model_dump(exclude_defaults=True, mode="json").items():
            out[key] = str(value).lower() if isinstance(value, bool) else str(value)
        if "model" not in out and out.keys() & {*ARCH_FIELDS, *MOE_FIELDS}:
            out = {"model": self.model, **out}
        return out
