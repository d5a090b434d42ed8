"""Reads published_runs.json, this package's own data file, and checks every row into a
``PublishedRun``: a key the record lacks, a required key left out, a value of the wrong type
or out of range, an unknown word, an undefined architecture or a repeated id is refused with
an error naming the row (index and id) and the field. ``parse`` and ``rows_from`` take the
text or the parsed object, so tests check the rules without a file; ``load`` reads the
packaged file once.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from dataclasses import MISSING, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from app.core.fidelity.data_file import DataError, check_keys, check_type, read_json
from app.core.fidelity.run_record import (
    PRECISIONS,
    RECOMPUTES,
    SCHEDULES,
    ZEROS,
    Arch,
    PublishedRun,
)
from app.core.inputs.presets import MODELS

DATA = "published_runs.json"
TOP = ("about", "architectures", "runs")
WORDS = {"schedule": SCHEDULES, "recompute": RECOMPUTES, "zero": ZEROS, "precision": PRECISIONS}
FRACTIONS = ("mfu", "hfu")  # stored as fractions of peak: 41% is 0.41
MAY_BE_EMPTY = ("flop_formula", "caveat", "note", "preset")  # "" when the source says nothing
# Field types from the records' own annotations, so the records stay the one schema.
RunsDataError = DataError  # what callers catch
HINTS = {cls: typing.get_type_hints(cls) for cls in (Arch, PublishedRun)}


@lru_cache(maxsize=1)
def load() -> tuple[PublishedRun, ...]:
    """The packaged rows, read and checked once; the tuple is immutable, so sharing is safe."""
    text = resources.files(__package__).joinpath(DATA).read_text(encoding="utf-8")
    return parse(text)


def parse(text: str) -> tuple[PublishedRun, ...]:
    return rows_from(read_json(text))


def rows_from(obj: Any) -> tuple[PublishedRun, ...]:
    """Every run of a parsed data file, checked, in the file's order."""
    _keys("the file", obj, TOP, TOP)
    about = obj["about"]
    if not isinstance(about, list) or not all(isinstance(s, str) for s in about):
        raise RunsDataError("the file", "about", "expected a list of strings")
    archs = _archs(obj["architectures"])
    if not isinstance(obj["runs"], list):
        raise RunsDataError("the file", "runs", "expected a list of rows")
    runs: list[PublishedRun] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(obj["runs"]):
        run = _run(i, raw, archs)
        if run.id in seen:
            raise RunsDataError(_where(i, raw), "id", f"repeats runs[{seen[run.id]}]")
        seen[run.id] = i
        runs.append(run)
    return tuple(runs)


def _archs(obj: Any) -> dict[str, Arch]:
    if not isinstance(obj, dict):
        raise RunsDataError("the file", "architectures", "expected an object of name: arch")
    out = {}
    for key, raw in obj.items():
        where = f"architectures[{key!r}]"
        _record(where, raw, Arch)
        arch = Arch(**raw)
        if arch.kv_heads is not None and arch.heads % arch.kv_heads:
            raise RunsDataError(where, "kv_heads", f"{arch.kv_heads} does not divide heads")
        _check_preset(where, arch)
        out[key] = arch
    return out


def _check_preset(where: str, arch: Arch) -> None:
    """A mixture of experts is priced as its preset: the row's shape must be the preset's."""
    if not arch.preset and not arch.experts:
        return
    spec = MODELS.get(arch.preset)
    if spec is None or not spec.experts:
        raise RunsDataError(where, "preset", f"{arch.preset!r} is not a mixture-of-experts preset")
    for name in ("layers", "hidden", "heads", "kv_heads", "vocab", "seq_len", "experts"):
        if getattr(arch, name) != getattr(spec, name):
            problem = f"{getattr(arch, name)} is not the preset's {getattr(spec, name)}"
            raise RunsDataError(where, name, problem)


def _where(i: int, raw: Any) -> str:
    ident = raw.get("id") if isinstance(raw, dict) else None
    return f"runs[{i}] {ident!r}" if isinstance(ident, str) else f"runs[{i}]"


def _run(i: int, raw: Any, archs: dict[str, Arch]) -> PublishedRun:
    where = _where(i, raw)
    _record(where, raw, PublishedRun)
    if raw["arch"] not in archs:
        raise RunsDataError(where, "arch", f"{raw['arch']!r} is not in 'architectures'")
    run = PublishedRun(**{**raw, "arch": archs[raw["arch"]]})
    _consistent(where, run)
    return run


def _record(where: str, raw: Any, cls: type) -> None:
    """Keys, types, ranges and words of one row (or architecture) against ``cls``'s fields."""
    names = [f.name for f in fields(cls)]
    required = [f.name for f in fields(cls) if f.default is MISSING]
    _keys(where, raw, names, required)
    for name, value in raw.items():
        # A row names its architecture; the record holds the Arch itself.
        hint = str if (cls is PublishedRun and name == "arch") else HINTS[cls][name]
        _value(where, name, value, hint)


def _keys(where: str, raw: Any, allowed: Sequence[str], required: Sequence[str]) -> None:
    check_keys(where, raw, allowed, required)


def _value(where: str, name: str, value: Any, hint: Any) -> None:
    check_type(where, name, value, hint)
    problem = _range_problem(name, value)
    if problem:
        raise RunsDataError(where, name, problem)


def _range_problem(name: str, value: Any) -> str:
    """Why ``value`` is out of range for ``name``, or "" when it is in range."""
    if isinstance(value, bool) or value is None:
        return ""
    # Every number counts or measures something (GPUs, layers, seconds, tokens): above zero.
    if isinstance(value, (int, float)) and not (math.isfinite(value) and value > 0):
        return f"{value} is not positive"
    if name in FRACTIONS and value > 1:
        return f"{value} is not a fraction of peak (41% is 0.41)"
    if name in WORDS and value not in WORDS[name]:
        return f"{value!r} is not one of {', '.join(WORDS[name])}"
    if isinstance(value, str) and not value and name not in MAY_BE_EMPTY:
        return "empty"
    return ""


def _consistent(where: str, run: PublishedRun) -> None:
    """Rules across fields, which the cost model's scenario relies on."""
    if run.gpus != run.tp * run.pp * run.dp * run.cp:
        raise RunsDataError(where, "gpus", f"{run.gpus} is not tp x pp x dp x cp")
    if (run.schedule == "none") != (run.pp == 1):
        raise RunsDataError(where, "schedule", f"{run.schedule!r} with pp {run.pp}")
    per_step = run.dp * (run.micro_batch or 1)  # one micro-batch on every DP rank
    if run.global_batch is not None and run.global_batch % per_step:
        raise RunsDataError(where, "global_batch", f"{run.global_batch} is not a multiple of "
                            f"dp x micro_batch = {per_step}")  # fmt: skip
    if run.vpp is not None and run.schedule != "interleaved":
        raise RunsDataError(where, "vpp", f"given with schedule {run.schedule!r}")
    if run.recompute_layers is not None and (
        run.recompute != "full" or run.recompute_layers > run.arch.layers
    ):
        problem = f"{run.recompute_layers} needs recompute 'full' and at most the arch's layers"
        raise RunsDataError(where, "recompute_layers", problem)
