"""Where the model's pieces sit on the pipeline ranks: the Pipeline value, computed once per
scenario by the schedules stage, which every later stage reads instead of asking the
schedule's name again.

A schedule places virtual stage k on (rank, chunk) (build.stage_location: interleaved
k -> (k % pp, k // pp); a V for zbv, DualPipeV and DualPipe). The model's layers are split
over the virtual stages one micro-batch runs through (all of them; one copy's p for
DualPipe, whose two copies split alike), then placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.schedules.build import (
    ScheduleName,
    chunks_per_rank,
    stage_location,
    stages_per_copy,
    virtual_stage,
)

Rows = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Pipeline:
    """One scenario's placement. ``layers[rank][chunk]`` and ``ends[rank][chunk]`` follow the
    rank's chunk order; ``split`` is in pipeline order (embedding side first)."""

    schedule: ScheduleName
    pp: int
    chunks: int  # model chunks per rank
    per_copy: int  # virtual stages one micro-batch runs through
    split: tuple[int, ...]  # layers per virtual stage, every copy
    layers: Rows
    ends: tuple[tuple[tuple[bool, bool], ...], ...]  # (holds the embedding, holds the head)
    head_rank: int  # the rank holding the last virtual stage
    given: bool  # the split came from the user (stage_layers), not default_split

    @property
    def stages(self) -> int:
        return self.pp * self.chunks

    def layer_lists(self) -> list[list[int]]:
        """``layers`` as lists: what JSON and callers that grow rows expect."""
        return [list(row) for row in self.layers]


def plan(
    name: ScheduleName | str,
    pp: int,
    virtual_stages: int,
    num_layers: int,
    given: Sequence[int] | None = None,
) -> Pipeline:
    """The placement of ``num_layers`` layers (split as ``given`` per virtual stage of one
    copy, else default_split) under schedule ``name`` on ``pp`` ranks."""
    name = ScheduleName(name)
    chunks = chunks_per_rank(name, virtual_stages)
    per_copy = stages_per_copy(name, pp, chunks)
    one_copy = list(given) if given is not None else default_split(num_layers, per_copy)
    split = one_copy * (pp * chunks // per_copy)  # DualPipe: both copies split alike
    return Pipeline(
        schedule=name,
        pp=pp,
        chunks=chunks,
        per_copy=per_copy,
        split=tuple(split),
        layers=tuple(tuple(row) for row in chunk_layers(split, name, pp)),
        ends=tuple(tuple(row) for row in chunk_ends(name, pp, chunks)),
        head_rank=stage_location(name, pp * chunks - 1, pp)[0],
        given=given is not None,
    )


def default_split(layers: int, slices: int) -> list[int]:
    """Layers of each of ``slices`` virtual stages, in pipeline order, when none are given.

    An uneven split gives the remainder to the middle stages: the short ones are taken
    alternately from the front and the back, so the first and the last, which also hold the
    embedding and the head, are lighter (Dubey et al. 2024 §3.3.2: Llama 3 405B's 126 layers
    on 16 stages drop one layer from the first and the last). One rule for every v: with one
    chunk per rank it is the per-rank split the cost model always used.
    """
    base, extra = divmod(layers, slices)
    if extra == 0:
        return [base] * slices
    short = slices - extra
    front, back = (short + 1) // 2, short // 2
    return [base if k < front or k >= slices - back else base + 1 for k in range(slices)]


def chunk_layers(split: Sequence[int], name: ScheduleName | str, pp: int) -> list[list[int]]:
    """``split`` (layers per virtual stage) as layers[rank][chunk], through the schedule's
    placement (build.stage_location: interleaved k -> (k % pp, k // pp), V for zbv)."""
    name = ScheduleName(name)
    out = [[0] * (len(split) // pp) for _ in range(pp)]
    for vs, n in enumerate(split):
        rank, chunk = stage_location(name, vs, pp)
        out[rank][chunk] = n
    return out


def chunk_ends(name: ScheduleName | str, pp: int, chunks: int) -> list[list[tuple[bool, bool]]]:
    """(holds the embedding, holds the head) of each rank's chunks: the first and the last
    stage of each copy of the model (one copy; DualPipe's two put both on each end rank)."""
    name = ScheduleName(name)
    run = stages_per_copy(name, pp, chunks)
    at = [[virtual_stage(name, r, c, pp) % run for c in range(chunks)] for r in range(pp)]
    return [[(k == 0, k == run - 1) for k in row] for row in at]


def even_layers(num_layers: int, pp: int, chunks: int) -> list[list[int]]:
    """The default split placed interleaved-style (chunk c of rank r is stage c*pp + r): what
    callers that name no schedule get (the planner; any v = 1 schedule)."""
    return chunk_layers(default_split(num_layers, pp * chunks), ScheduleName.interleaved, pp)
