"""``--bench-collectives`` output (gpu_probe/collectives.py): the measured links of a mesh,
one slowest group per axis and size, which the core can use as a hardware profile instead of
a datasheet preset. Strict as the probe's frames are (app/core/inputs/protocol.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.core.inputs.protocol import MAX_SECONDS, MAX_WORLD, VERSION, RunName, Version, _Strict


class LinkPoint(_Strict):
    """One message size of a collective-probe sweep (nccl-tests' columns)."""

    bytes: int = Field(ge=1, le=1 << 34)
    latency_s: float = Field(gt=0.0, le=MAX_SECONDS)
    algbw_gbps: float = Field(ge=0.0)  # bytes / latency, in GB/s (1e9)
    busbw_gbps: float = Field(ge=0.0)  # algbw * 2(n-1)/n for all-reduce, algbw for send/recv


class AxisProfile(_Strict):
    axis: Literal["dp", "pp", "tp"]
    op: Literal["all_reduce", "send_recv"]
    group_size: int = Field(ge=2, le=MAX_WORLD)
    crosses_node: bool
    points: list[LinkPoint] = Field(max_length=64)


class CollectiveProfile(_Strict):
    """``--bench-collectives`` output: measured links of this mesh, the slowest group per
    size, usable by the core as a hardware profile instead of a datasheet preset."""

    v: Version = VERSION
    run: RunName
    device: Literal["cpu", "cuda"]
    backend: str = Field(max_length=32)
    world_size: int = Field(ge=1, le=MAX_WORLD)
    axes: list[AxisProfile] = Field(max_length=3)
