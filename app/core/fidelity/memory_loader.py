"""Reads published_memory.json (docs/published_memory.md), this package's measured per-GPU
peak memory and out-of-memory outcomes, into typed ``MemoryRow`` records. A key a record
lacks, a required key left out, a value of the wrong type or out of range, an unknown word,
a layout whose GPUs are not dp x tp x pp x cp, a measured allocated figure above the
reserved one, an "ok" row with an OOM figure or a repeated id is refused with an error naming
the row (index and id) and the field. ``parse`` and ``rows_from`` take the text or the parsed
object, so tests check the rules without a file; ``load`` reads the packaged file once.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from app.core.fidelity.data_file import DataError, check_keys, check_type, read_json

DATA = "published_memory.json"
TOP = ("about", "rows")
# The words the board branches on, by field.
WORDS = {
    "pipeline_schedule": ("none", "1f1b", "interleaved"),
    "recompute": ("none", "selective", "full"),
    "outcome": ("ok", "oom"),
    "size_class": ("small", "mid", "large"),
}
ZERO_STAGES = (0, 1, 2, 3)


@dataclass(frozen=True)
class MemModel:
    name: str
    params_b: float | None
    layers: int
    hidden: int
    ffn_hidden: int | None  # None: not stated by the source
    heads: int
    kv_heads: int
    vocab: int | None
    seq_len: int | None
    gated_mlp: bool
    activation: str
    tied_embeddings: bool | None
    norm: str
    position_embedding: str
    shape_source: str


@dataclass(frozen=True)
class MemParallel:
    gpus: int
    dp: int  # excluding cp
    tp: int
    pp: int
    vpp: int | None
    cp: int
    sequence_parallel: bool | None
    zero_stage: int  # 0 replica, 1 optimizer sharded, 3 FSDP full shard
    sharding: str
    micro_batch_size: int | None
    global_batch_size: int | None
    grad_accum: int | None
    num_microbatches: int | None
    pipeline_schedule: str


@dataclass(frozen=True)
class MemTraining:
    precision: str
    param_dtype: str
    master_weights: str
    grad_dtype: str
    optimizer: str
    optimizer_state_dtype: str
    recompute: str
    recompute_detail: str | None
    flash_attention: bool | None
    fused_cross_entropy: bool | None
    torch_compile: bool | None
    fp8_recipe: str | None


@dataclass(frozen=True)
class Measured:
    value_as_published: str
    metric: str
    peak_allocated_gib: float | None
    peak_reserved_gib: float | None
    nvidia_smi_gib: float | None
    other_gib: dict | None
    outcome: str  # "ok" or "oom"
    where: str | None


@dataclass(frozen=True)
class MemoryRow:
    id: str
    source: str
    url: str
    quote: str
    framework: str
    hardware: str
    hbm_gb_nominal: int | None
    hbm_gib: float | None
    model: MemModel
    parallel: MemParallel
    training: MemTraining
    measured: Measured
    note: str
    approximate: bool
    framework_family: str
    size_class: str
    gpu: str


NESTED = {"model": MemModel, "parallel": MemParallel, "training": MemTraining,
          "measured": Measured}  # fmt: skip
MemoryDataError = DataError  # what callers catch
HINTS = {cls: typing.get_type_hints(cls) for cls in (*NESTED.values(), MemoryRow)}


@lru_cache(maxsize=1)
def load() -> tuple[MemoryRow, ...]:
    """The packaged rows, read and checked once; the tuple is immutable, so sharing is safe."""
    text = resources.files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    return parse(text)


def parse(text: str) -> tuple[MemoryRow, ...]:
    return rows_from(read_json(text))


def rows_from(obj: Any) -> tuple[MemoryRow, ...]:
    """Every row of a parsed data file, checked, in the file's order."""
    _keys("the file", "", obj, TOP, TOP)
    if not isinstance(obj["about"], dict):
        raise MemoryDataError("the file", "about", "expected an object")
    if not isinstance(obj["rows"], list):
        raise MemoryDataError("the file", "rows", "expected a list of rows")
    out: list[MemoryRow] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(obj["rows"]):
        row = _row(i, raw)
        if row.id in seen:
            raise MemoryDataError(_where(i, raw), "id", f"repeats rows[{seen[row.id]}]")
        seen[row.id] = i
        out.append(row)
    return tuple(out)


def _where(i: int, raw: Any) -> str:
    ident = raw.get("id") if isinstance(raw, dict) else None
    return f"rows[{i}] {ident!r}" if isinstance(ident, str) else f"rows[{i}]"


def _row(i: int, raw: Any) -> MemoryRow:
    where = _where(i, raw)
    parts = _record(where, "", raw, MemoryRow)
    for name, cls in NESTED.items():
        parts[name] = cls(**_record(where, f"{name}.", raw[name], cls))
    row = MemoryRow(**parts)
    _consistent(where, row)
    return row


def _record(where: str, prefix: str, raw: Any, cls: type) -> dict[str, Any]:
    """Keys, types, ranges and words of one record against ``cls``'s fields (every key is
    required: a source that says nothing has null)."""
    names = [f.name for f in fields(cls)]
    _keys(where, prefix, raw, names, names)
    for name, value in raw.items():
        if cls is MemoryRow and name in NESTED:
            continue  # checked as its own record
        _value(where, prefix + name, value, HINTS[cls][name])
    return dict(raw)


def _keys(where: str, prefix: str, raw: Any, allowed: Any, required: Any) -> None:
    check_keys(where, raw, allowed, required, prefix)


def _value(where: str, name: str, value: Any, hint: Any) -> None:
    check_type(where, name, value, hint)
    problem = _range_problem(name.rsplit(".", 1)[-1], value)
    if problem:
        raise MemoryDataError(where, name, problem)


def _range_problem(name: str, value: Any) -> str:
    """Why ``value`` is out of range for ``name``, or "" when it is."""
    if isinstance(value, bool) or value is None:
        return ""
    if name == "zero_stage":
        return "" if value in ZERO_STAGES else f"{value} is not one of 0, 1, 2, 3"
    # Every other number counts or measures something (GPUs, layers, GiB): above zero.
    if isinstance(value, (int, float)) and not (math.isfinite(value) and value > 0):
        return f"{value} is not positive"
    if isinstance(value, dict):
        bad = [k for k, v in value.items() if not _positive(v)]
        return f"{bad[0]!r} is not a positive number of GiB" if bad else ""
    if name in WORDS and value not in WORDS[name]:
        return f"{value!r} is not one of {', '.join(WORDS[name])}"
    if isinstance(value, str) and not value:
        return "empty"
    return ""


def _positive(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v) and v > 0


def _consistent(where: str, row: MemoryRow) -> None:
    """Rules across fields that the board's scenario relies on."""
    p, m, me = row.parallel, row.model, row.measured
    if p.gpus != p.dp * p.tp * p.pp * p.cp:
        raise MemoryDataError(where, "parallel.gpus", f"{p.gpus} is not dp x tp x pp x cp")
    if (p.pipeline_schedule == "none") != (p.pp == 1):
        raise MemoryDataError(where, "parallel.pipeline_schedule",
                              f"{p.pipeline_schedule!r} with pp {p.pp}")  # fmt: skip
    if p.vpp is not None and p.pipeline_schedule != "interleaved":
        raise MemoryDataError(where, "parallel.vpp", f"given with {p.pipeline_schedule!r}")
    if m.heads % m.kv_heads or m.hidden % m.heads:
        raise MemoryDataError(where, "model.kv_heads", "kv_heads must divide heads, heads hidden")
    if (
        me.peak_allocated_gib
        and me.peak_reserved_gib
        and (me.peak_allocated_gib > me.peak_reserved_gib)
    ):
        raise MemoryDataError(where, "measured.peak_allocated_gib", "above peak_reserved_gib")
