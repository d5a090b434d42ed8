"""The kind of a configuration: what a published run's error is taken to say something about.

``kind_of`` is the one definition, for a scenario and for a published row alike (a row's kind
is the kind of the scenario it is predicted as, board.scenario_of). Ten fields, each a
thing the validation set shows the error moving with, or a thing it never measured:

generation  the GPU generation whose constants the hardware uses (``GENERATIONS``; None: the
            cost model has no fitted constants for it)
schedule    the pipeline schedule's name; "none" when pp = 1 (every schedule is then one stage
            running its micro-batches in turn)
tp, pp, dp  which parallel axes are above 1
zero3       ZeRO stage 3 / FSDP (parameters sharded and gathered) rather than stage 0-2
sp          sequence parallelism on (counted only with tp > 1, where it changes anything)
fp8         an FP8 recipe on (the linear GEMMs at the FP8 rate, cost/fp8.py)
cp          context parallelism on (the sequence split over cp ranks, its K/V exchange)
moe         a mixture of experts (routed experts, their all-to-all and grouped GEMMs)

Sizes (how many GPUs, TP 2 or 8, the model) are not in the key: within a kind the rows span
them, and the band is their spread.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from app.core.fidelity.board import HARDWARE_ALIASES
from app.core.inputs.hardware import AMPERE, HARDWARE, HOPPER
from app.core.inputs.scenario import Scenario
from app.core.inputs.specs import model_of

# The generations the cost model has constants for, by the constants themselves: a preset
# added with AMPERE's or HOPPER's efficiency is that generation without another table.
GENERATIONS = {"ampere": AMPERE, "hopper": HOPPER}
NO_PIPELINE = "none"


@dataclass(frozen=True)
class ConfigKind:
    generation: str | None
    schedule: str
    tp: bool
    pp: bool
    dp: bool
    zero3: bool
    sp: bool
    fp8: bool = False
    cp: bool = False
    moe: bool = False


FIELDS = tuple(f.name for f in fields(ConfigKind))


def generation(hardware: str) -> str | None:
    """The generation whose constants a hardware preset uses, or None."""
    spec = HARDWARE.get(HARDWARE_ALIASES.get(hardware, hardware))
    if spec is None:
        return None
    return next((g for g, eff in GENERATIONS.items() if spec.efficiency == eff), None)


def kind_of(s: Scenario) -> ConfigKind:
    """The kind key of a scenario (see the module docstring for each field)."""
    return ConfigKind(
        generation=generation(s.hardware),
        schedule=s.schedule.value if s.pp > 1 else NO_PIPELINE,
        tp=s.tp > 1,
        pp=s.pp > 1,
        dp=s.dp > 1,
        zero3=s.zero == 3,
        sp=s.sequence_parallel and s.tp > 1,
        fp8=s.fp8 != "none",
        cp=s.cp > 1,
        moe=_moe(s),
    )


def _moe(s: Scenario) -> bool:
    """Whether the scenario's model has routed experts (False where the model is unknown:
    evaluate names that problem itself)."""
    try:
        return bool(model_of(s).experts)
    except ValueError:
        return False


def as_json(kind: ConfigKind) -> dict[str, Any]:
    return asdict(kind)


def differences(kind: ConfigKind, other: ConfigKind) -> list[dict[str, Any]]:
    """Each field where ``other`` differs from ``kind``: its name and both values."""
    return [
        {"field": f, "this": getattr(kind, f), "other": getattr(other, f)}
        for f in FIELDS
        if getattr(kind, f) != getattr(other, f)
    ]
