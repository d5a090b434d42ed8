"""Pipeline schedules as data: each schedule family's per-rank action order (build and one
module per family: dualpipe, torch_orders, v_shape, zero_bubble), the placement of model
chunks on ranks (pipeline.Pipeline), which action releases which output (units) and the
deadlock dry run (deadlock). Imports layout and support only.

This module re-exports build's vocabulary (ScheduleName, Action, build, ...), which every
later stage speaks."""

from app.core.schedules.build import (
    FORWARD_ONLY,
    MULTI_CHUNK,
    RELEASE_BY_UNIT,
    SPLIT_BACKWARD,
    TWO_COPIES,
    V_SHAPED,
    Action,
    ScheduleError,
    ScheduleName,
    build,
    chunks_per_rank,
    compact,
    interleaved_rounds,
    release_units,
    stage_location,
    stages_per_copy,
    validate,
    virtual_stage,
)

__all__ = [
    "FORWARD_ONLY",
    "MULTI_CHUNK",
    "RELEASE_BY_UNIT",
    "SPLIT_BACKWARD",
    "TWO_COPIES",
    "V_SHAPED",
    "Action",
    "ScheduleError",
    "ScheduleName",
    "build",
    "chunks_per_rank",
    "compact",
    "interleaved_rounds",
    "release_units",
    "stage_location",
    "stages_per_copy",
    "validate",
    "virtual_stage",
]
