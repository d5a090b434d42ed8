"""The process groups of one rank, built with DeviceMesh in app.core.layout.topology's order.

``init_device_mesh`` is row-major: its last dim varies fastest. The core's order lists axes
fastest first, so the mesh dims are that order reversed; for the default ``tp-pp-dp`` that is
``(dp, pp, tp)``. Every rank asserts at start-up that its mesh coordinate and each group's
member ranks equal what the core computes, so the timeline the probe reports is drawn on
the same rank layout the predicted one uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

from app.core.layout.topology import AXES, Coord, Layout


class MeshMismatchError(RuntimeError):
    """DeviceMesh placed a rank differently from app.core.layout.topology."""


@dataclass(frozen=True)
class MeshContext:
    """Everything a rank needs about where it sits. Passed explicitly; nothing is global."""

    layout: Layout
    rank: int
    coord: Coord
    node: int
    device: torch.device
    mesh: DeviceMesh
    groups: dict[str, dist.ProcessGroup | None]  # None where the axis has size 1

    def size(self, axis: str) -> int:
        return self.layout.size(axis)

    def group(self, axis: str) -> dist.ProcessGroup | None:
        """The axis's group, or None when it has one member (collectives are skipped)."""
        return self.groups[axis]

    def stage_rank(self, stage: int) -> int:
        """Global rank holding pipeline stage ``stage`` in this rank's (dp, tp) replica."""
        return self.layout.rank_of(self.coord.dp, stage, self.coord.tp)

    def describe(self) -> str:
        c = self.coord
        return f"rank {self.rank} (dp{c.dp} pp{c.pp} tp{c.tp}, node {self.node})"


def mesh_dims(layout: Layout) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Mesh dim names and sizes, slowest first, for ``init_device_mesh``."""
    names = tuple(reversed(layout.order))
    return names, tuple(layout.size(a) for a in names)


def build_mesh(layout: Layout, rank: int, device: torch.device, node: int) -> MeshContext:
    """Build the mesh (a collective: every rank must call it) and check it against the core."""
    names, shape = mesh_dims(layout)
    mesh = init_device_mesh(device.type, shape, mesh_dim_names=names)
    check_mesh(mesh, layout, rank)
    groups = {a: (mesh.get_group(a) if layout.size(a) > 1 else None) for a in AXES}
    return MeshContext(layout, rank, layout.coord(rank), node, device, mesh, groups)


def check_mesh(mesh: DeviceMesh, layout: Layout, rank: int) -> None:
    expected = layout.coord(rank)
    for axis in AXES:
        got = mesh.get_local_rank(axis)
        members = dist.get_process_group_ranks(mesh.get_group(axis))
        want = layout.group(axis, rank)
        if got != expected.get(axis) or members != want:
            stride = layout.strides[axis]
            raise MeshMismatchError(
                f"rank {rank}: DeviceMesh puts {axis}={got} in group {members}, but the core's "
                f"order {'-'.join(layout.order)} gives {axis} = (rank // {stride}) % "
                f"{layout.size(axis)} = {expected.get(axis)} in group {want}"
            )
