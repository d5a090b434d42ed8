"""The Scenario's field parsers and its cross-field error: stage_layers and the teaching
times as comma lists, their bounds, and ScenarioError, which names the field to change."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated

from pydantic import Field, TypeAdapter
from pydantic_core import PydanticCustomError

# Layers of one virtual stage: at least one (a chunk without layers would still take a
# schedule slot and a p2p hop for nothing), at most a model's bound on ``layers``.
MAX_LAYERS = 1024

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


def _too_long(field: str) -> ScenarioError:
    return ScenarioError.keyed(
        field, "scenario.list_too_long", "at most {limit} entries (one per virtual stage)",
        limit=MAX_LAYERS,
    )  # fmt: skip


def parse_layer_list(text: str, field: str = "stage_layers") -> tuple[int, ...]:
    """``31,32,32,31`` -> (31, 32, 32, 31); each entry a whole number in 1..MAX_LAYERS."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > MAX_LAYERS:
        raise _too_long(field)
    out = []
    for k, part in enumerate(parts):
        if not part.isdigit() or not part.isascii():
            raise ScenarioError.keyed(
                field, "scenario.layer_entry", "entry {k} is not a whole number of layers", k=k
            )
        n = int(part) if len(part) <= 6 else MAX_LAYERS + 1  # no int() of a huge string
        if not 1 <= n <= MAX_LAYERS:
            raise ScenarioError.keyed(
                field, "scenario.layer_entry_range",
                "entry {k} is out of bounds: each virtual stage holds 1 to {limit} layers",
                k=k, limit=MAX_LAYERS,
            )  # fmt: skip
        out.append(n)
    return tuple(out)


def parse_time_list(text: str, low: float, field: str = "f_time") -> tuple[float, ...]:
    """``1,1,1,1.5`` -> (1.0, 1.0, 1.0, 1.5); each entry finite, in low..MAX_TIME."""
    if text.count(",") >= MAX_LAYERS:
        # A virtual stage holds >= 1 layer and a model <= MAX_LAYERS: no longer list is valid.
        raise _too_long(field)
    out = []
    for k, part in enumerate(p.strip() for p in text.split(",")):
        try:
            value = float(part)
        except ValueError:
            raise ScenarioError.keyed(
                field, "scenario.time_entry", "entry {k} is not a number", k=k
            ) from None
        if not math.isfinite(value):
            raise ScenarioError.keyed(
                field, "scenario.time_entry_finite", "entry {k} is not a finite number", k=k
            )
        if not low <= value <= MAX_TIME:
            raise ScenarioError.keyed(
                field, "scenario.time_entry_range",
                "entry {k} is out of bounds: each entry is {low} to {high}",
                k=k, low=f"{low:g}", high=f"{MAX_TIME:g}",
            )  # fmt: skip
        out.append(value)
    return tuple(out)


def as_field_error(exc: ValueError, fallback_type: str) -> PydanticCustomError:
    """A parser's error as pydantic reports a field's: a keyed ScenarioError keeps its key as
    the type and its params as the context, so each page words it in its own language; the
    reason alone, without pydantic's "Value error, " prefix."""
    key = getattr(exc, "key", None)
    ctx = {k: str(v) for k, v in getattr(exc, "params", {}).items()}
    reason = getattr(exc, "reason", str(exc))
    return PydanticCustomError(key or fallback_type, reason, ctx if key else None)


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
