"""What the tuning rules (app/core/teach/advice.py) read and say: a step's breakdown, predicted
or measured, and one piece of advice in English and Chinese."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost.predict import WhatIf


@dataclass(frozen=True)
class Breakdown:
    step_s: float
    tp_s: float  # TP collective seconds on the busiest rank
    dp_s: float  # DP gradient all-reduce seconds
    bubble_fraction: float
    memory_ratio: float  # peak bytes per GPU / capacity; > 1 is out of memory
    microbatches: int
    pp: int
    tp: int
    schedule: str
    tp_crosses_node: bool = False
    # The memory tips' inputs; their defaults (a measured run's) keep those tips silent.
    dtype: str = "bf16"
    recompute: str = "full"
    peak_bytes: float = 0.0
    activations_bytes: float = 0.0  # on the peak-memory GPU
    capacity_bytes: float = 0.0
    tp_bytes: float = 0.0
    full_recompute: WhatIf | None = None
    bf16: WhatIf | None = None
    # The pipeline's balance (views.prediction.balance_json), when predicted: each stage's
    # F+B seconds and layers, which stages hold the embedding and the head, and the split.
    stage_work: tuple[float, ...] = ()
    stage_layers: tuple[int, ...] = ()
    stage_ends: tuple[tuple[bool, bool], ...] = ()
    chunks: int = 1
    # Context and expert parallelism (a 3D step leaves them at 0 and 1: their rules stay
    # silent): CP's ring and EP's all-to-all seconds on the same basis as tp_s.
    cp_s: float = 0.0
    ep_s: float = 0.0
    cp: int = 1
    ep: int = 1
    cp_crosses_node: bool = False
    ep_crosses_node: bool = False


@dataclass(frozen=True)
class Advice:
    rule: str
    message: str
    message_zh: str


def share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0
