"""Scenario: everything a user can set, validated. One scenario in, one view model out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.core.layout.topology import parse_order
from app.core.schedules import ScheduleName, chunks_per_rank, stage_location
from app.core.simulate import Durations, DurationsLike, per_chunk

MAX_WORLD = 65_536
CUSTOM_MODEL = "custom"
# Fields that describe a model's shape: given without ``model=``, they describe a new model,
# never a silent edit of the default preset (whose SwiGLU and 8 KV heads they would inherit).
ARCH_FIELDS = (
    "layers", "hidden", "heads", "kv_heads", "seq_len", "vocab", "ffn_hidden",
    "gated_mlp", "tied_embeddings", "learned_positions",
)  # fmt: skip
# Layers of one virtual stage: at least one (a chunk without layers would still take a
# schedule slot and a p2p hop for nothing), at most a model's bound on ``layers``.
MAX_LAYERS = 1024
# A bound on simulated work so one request stays well under a second (p=64, m=512, v=4 fits).
MAX_SIMULATED_ACTIONS = 64 * 512 * 4 * 3


# Bounds of one teaching duration, per field: F must take time; B and W may be 0 (W = 0: the
# backward is not split). The upper bound keeps sums of thousands of them finite.
MAX_TIME = 1e6
TIME_LOW = (("f_time", 1e-6), ("b_time", 0.0), ("w_time", 0.0))
TIME_LIST = (
    "One number, or a comma list: one per pipeline stage (pp entries) or one per virtual "
    "stage (pp*chunks entries, model order, 0 = embedding side), e.g. 1,1,1,1.5."
)
# One number, validated as pydantic validates a float field, so its errors keep their types.
_ONE_TIME = MappingProxyType(
    {
        name: TypeAdapter(Annotated[float, Field(ge=low, le=MAX_TIME, allow_inf_nan=False)])
        for name, low in TIME_LOW
    }
)


class ScenarioError(ValueError):
    """A cross-field problem, reported against the one field the user should change.

    ``reason`` is English. ``key`` (optional) names the same message in the catalogues'
    ``errors`` group (``err.<key>``), and ``params`` fill its placeholders, so the web layer
    can word it in a page's language; the core itself stays language-free. ``keyed`` builds
    the English reason from the template the English catalogue holds for that key."""

    def __init__(
        self,
        field: str,
        reason: str,
        key: str | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason
        self.key, self.params = key, dict(params or {})

    @classmethod
    def keyed(cls, field: str, key: str, template: str, /, **params: object) -> ScenarioError:
        """The error for ``field`` whose reason is ``template`` filled with ``params``."""
        return cls(field, template.format(**params), key, params)


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("must be a finite number (NaN and infinity are not accepted)")
    return value


def parse_layer_list(text: str) -> tuple[int, ...]:
    """``31,32,32,31`` -> (31, 32, 32, 31); each entry a whole number in 1..MAX_LAYERS."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > MAX_LAYERS:
        raise ValueError(f"at most {MAX_LAYERS} entries (one per virtual stage)")
    out = []
    for k, part in enumerate(parts):
        if not part.isdigit() or not part.isascii():
            raise ValueError(f"entry {k} is not a whole number of layers")
        n = int(part) if len(part) <= 6 else MAX_LAYERS + 1  # no int() of a huge string
        if not 1 <= n <= MAX_LAYERS:
            raise ValueError(
                f"entry {k} is out of bounds: each virtual stage holds 1 to {MAX_LAYERS} layers"
            )
        out.append(n)
    return tuple(out)


def parse_time_list(text: str, low: float) -> tuple[float, ...]:
    """``1,1,1,1.5`` -> (1.0, 1.0, 1.0, 1.5); each entry finite, in low..MAX_TIME."""
    if text.count(",") >= MAX_LAYERS:
        # A virtual stage holds >= 1 layer and a model <= MAX_LAYERS: no longer list is valid.
        raise ValueError(f"at most {MAX_LAYERS} entries (one per virtual stage)")
    out = []
    for k, part in enumerate(p.strip() for p in text.split(",")):
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"entry {k} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"entry {k} is not a finite number")
        if not low <= value <= MAX_TIME:
            raise ValueError(f"entry {k} is out of bounds: each entry is {low:g} to {MAX_TIME:g}")
        out.append(value)
    return tuple(out)


def check_time_length(field: str, n: int, pp: int, chunks: int) -> None:
    """A list gives one entry per pipeline stage or per virtual stage; ScenarioError if not."""
    if n in (1, pp, pp * chunks):
        return
    if chunks == 1:
        raise ScenarioError.keyed(
            field, "scenario.time_length",
            "{n} entries; allowed: 1 (the same for every chunk), pp = {pp} (one per pipeline "
            "stage)", n=n, pp=pp,
        )  # fmt: skip
    raise ScenarioError.keyed(
        field, "scenario.time_length_vs",
        "{n} entries; allowed: 1 (the same for every chunk), pp = {pp} (one per pipeline stage)"
        " or pp*chunks = {pp}*{chunks} = {vs} (one per virtual stage)",
        n=n, pp=pp, chunks=chunks, vs=pp * chunks,
    )  # fmt: skip


class Scenario(BaseModel):
    """The URL's query parameters. Optional model/hardware fields override the preset."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    dp: int = Field(2, ge=1, le=MAX_WORLD, description="data-parallel replicas")
    tp: int = Field(2, ge=1, le=MAX_WORLD, description="tensor-parallel shards per layer")
    pp: int = Field(2, ge=1, le=MAX_WORLD, description="pipeline stages")
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
    # Selective by default: FlashAttention-era training never stores the s x s scores, which
    # is what Korthikanti et al. 2022's selective recompute drops from the activations.
    recompute: Literal["none", "selective", "full"] = "selective"
    sequence_parallel: bool = False
    flash_attention: bool = Field(True, description="FlashAttention: no s x s scores in HBM")
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
            entries = parse_time_list(value, dict(TIME_LOW)[name])
            if {"pp", "schedule", "virtual_stages"} <= d.keys():  # else their own errors
                chunks = chunks_per_rank(d["schedule"], d["virtual_stages"])
                check_time_length(name, len(entries), d["pp"], chunks)
        except ValueError as exc:  # the reason alone, without pydantic's "Value error, "
            key = getattr(exc, "key", None)  # a keyed ScenarioError: its key is the type
            ctx = {k: str(v) for k, v in getattr(exc, "params", {}).items()}
            reason = getattr(exc, "reason", str(exc))
            raise PydanticCustomError(key or "time_list", reason, ctx if key else None) from None
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
            raise ValueError("must be comma-separated layer counts, e.g. 31,32,32,31")
        return ",".join(str(n) for n in parse_layer_list(value))

    @field_validator("order")
    @classmethod
    def _known_order(cls, value: str) -> str:
        return "-".join(parse_order(value))

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp

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
        """The non-default fields as URL query values: the share link."""
        out = {}
        for key, value in self.model_dump(exclude_defaults=True, mode="json").items():
            out[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return out


def teaching_durations(s: Scenario) -> DurationsLike | None:
    """f_time/b_time/w_time/p2p_time in abstract units, or None: one Durations, or
    durations[rank][chunk] when a time is a list (b defaults to f, w to 0, entry by entry)."""
    f = s.times("f_time")
    if f is None:
        return None
    times = {"f_time": f, "b_time": s.times("b_time") or f, "w_time": s.times("w_time") or (0.0,)}
    for name, values in times.items():
        check_time_length(name, len(values), s.pp, s.chunks)  # copies skip validation
    p2p, pp, chunks = s.p2p_time or 0.0, s.pp, s.chunks
    if all(len(v) == 1 for v in times.values()):
        return Durations(f=f[0], b=times["b_time"][0], w=times["w_time"][0], p2p=p2p, fb=s.fb_time)
    at = [stage_location(s.schedule, vs, pp) for vs in range(pp * chunks)]
    rows = {k: [[v[r % len(v)]] * chunks for r in range(pp)] for k, v in times.items()}
    for k, v in times.items():
        for vs, (rank, chunk) in enumerate(at if len(v) == pp * chunks > pp else ()):
            rows[k][rank][chunk] = v[vs]  # model order -> (rank, chunk) of the placement
    f_, b_, w_ = rows.values()
    return [
        [Durations(f_[r][c], b_[r][c], w_[r][c], p2p, fb=s.fb_time) for c in range(chunks)]
        for r in range(pp)
    ]


def teaching_f(d: DurationsLike, pp: int, chunks: int) -> float:
    """Rank 0's mean chunk F (a single Durations' own): what teaching units are scaled by."""
    return d.f if isinstance(d, Durations) else Durations.mean(per_chunk(d, pp, chunks)[0]).f
