"""Which meshscope schedules torch 2.13 has, under its own names
(torch/distributed/pipelining/schedules.py get_schedule_class), and why the others are not."""

from __future__ import annotations

from app.core.export.result import Cannot
from app.core.schedules import ScheduleName

S = ScheduleName
TORCH_SCHEDULES = {
    S.gpipe: "GPipe",
    S.one_f_one_b: "1F1B",
    S.interleaved: "Interleaved1F1B",
    S.looped_bfs: "LoopedBFS",
    S.interleaved_zb: "InterleavedZeroBubble",
    S.zbv: "ZBVZeroBubble",
    S.dualpipev: "DualPipeV",
}
_WHY_NOT = {
    S.naive: "the forward-only fill-and-drain demo is not a training schedule",
    S.zb_h1: "torch has no ZB-H1 class (its zero-bubble schedules are InterleavedZeroBubble "
    "and ZBVZeroBubble)",
    S.zb_h2: "torch has no ZB-H2 class: its extra warm-up forwards are not in any torch schedule",
    S.dualpipe: "DualPipe keeps two copies of every stage's parameters (DeepSeek-V3); torch "
    "places each stage once and has DualPipeV, its one-copy V, instead",
}


def torch_schedule(name: ScheduleName, target: str) -> str:
    """torch's name for ``name``; Cannot (code ``<target>_schedule``) if torch lacks it."""
    if name in TORCH_SCHEDULES:
        return TORCH_SCHEDULES[name]
    raise Cannot.keyed(
        f"{target}_schedule", "torch 2.13 cannot run {schedule}: {why}",
        schedule=name.value, why=_WHY_NOT[name],
    )  # fmt: skip
