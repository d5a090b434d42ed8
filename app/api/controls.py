"""The page's controls, derived from the Scenario model, plus the view's own URL state.

Every scenario field becomes a control of the matching kind, so a field added to the core
shows up on the page without touching a template. View state (selected rank, cursor,
language, colouring, speed) is validated by its own model, with the same 422 rules.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Iterable
from itertools import permutations
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from app.core.inputs.hardware import HARDWARE
from app.core.inputs.scenario import Scenario
from app.core.layout.topology import ORDER_PRESETS
from app.i18n.lang import Lang

PRIMARY = (
    "dp",
    "tp",
    "pp",
    "order",
    "gpus_per_node",
    "schedule",
    "microbatches",
    "virtual_stages",
)


class ViewState(BaseModel):
    """The URL's view parameters; everything else in the URL is the scenario."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    lang: Lang = "en"  # one of the catalogues' languages (validation context)
    rank: int | None = Field(None, ge=0, description="selected rank")
    t: float = Field(0.0, ge=0, le=1e12, description="flow cursor, in timeline units")
    color: Literal["dp", "pp", "tp", "cp", "ep", "node"] = "pp"
    speed: float = Field(2.0, gt=0, le=64, description="animation steps per second")
    playing: bool = Field(False, description="flow animation running (Space toggles it)")


VIEW_KEYS = frozenset(ViewState.model_fields)


def _choices(annotation: Any) -> list[str] | None:
    """Allowed values of an Enum or Literal field (through Optional), else None."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Literal:
        return [str(a) for a in args]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(m.value) for m in annotation]
    for arg in args:
        found = _choices(arg)
        if found:
            return found
    return None


def _base_type(annotation: Any) -> type | None:
    if annotation in (int, float, bool, str):
        return annotation
    for arg in typing.get_args(annotation):
        if arg in (int, float, bool, str):
            return arg
    return None


def _bounds(info: FieldInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in info.metadata:
        for attr, key in (("ge", "min"), ("gt", "min"), ("le", "max"), ("lt", "max")):
            if getattr(m, attr, None) is not None:
                out[key] = getattr(m, attr)
    return out


def order_options() -> list[dict[str, str]]:
    """All six axis orders, each labelled with the frameworks that use it."""
    out = []
    for axes in permutations(("tp", "pp", "dp")):
        names = sorted(k for k, v in ORDER_PRESETS.items() if v == axes)
        value = "-".join(axes)
        # names: the presets bare, for a page to word "article" in its language (control.html)
        label = value + (f" ({', '.join(names)})" if names else "")
        out.append({"value": value, "label": label, "names": names})
    return out


def field_spec(name: str, info: FieldInfo, hardware: Iterable[str] = HARDWARE) -> dict[str, Any]:
    default = info.default.value if isinstance(info.default, enum.Enum) else info.default
    spec: dict[str, Any] = {"name": name, "default": default, "primary": name in PRIMARY}
    choices = _choices(info.annotation)
    if name == "order":
        spec.update(kind="select", options=order_options())
    elif name == "hardware":
        # A plain str in the Scenario, since the names are the server's (presets + profiles).
        spec.update(kind="select", options=[{"value": n, "label": n} for n in hardware])
    elif choices:
        spec.update(kind="select", options=[{"value": c, "label": c} for c in choices])
    elif _base_type(info.annotation) is bool:
        spec.update(kind="bool")
    elif _base_type(info.annotation) in (int, float):
        step = "1" if _base_type(info.annotation) is int else "any"
        spec.update(kind="number", step=step, **_bounds(info))
    else:
        spec.update(kind="text")
    return spec


def scenario_fields(hardware: Iterable[str] = HARDWARE) -> list[dict[str, Any]]:
    """Every scenario control; hardware lists the registry's names in its order, which puts
    the built-in presets before loaded profiles (app/core/hardware_profile.specs_registry)."""
    return [field_spec(name, info, hardware) for name, info in Scenario.model_fields.items()]


def defaults() -> dict[str, Any]:
    """Scenario and view defaults as the URL would spell them (so JS can leave them out)."""
    out = {}
    for model in (Scenario, ViewState):
        for name, info in model.model_fields.items():
            d = info.default
            out[name] = d.value if isinstance(d, enum.Enum) else d
    return out
