"""Pipeline schedules as data: one ordered list of actions per pipeline rank.

``F`` is a forward, ``B`` the backward (input gradient only where the schedule splits the
backward, the whole backward otherwise) and ``W`` the weight gradient. ``chunk`` is the
model chunk on the rank (0 when there is one chunk per rank).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from app.core import schedules_v
from app.core.gc_pause import gc_paused


class ScheduleName(str, Enum):
    naive = "naive"
    gpipe = "gpipe"
    one_f_one_b = "1f1b"
    interleaved = "interleaved"
    zb_h1 = "zb-h1"
    zbv = "zbv"
    dualpipev = "dualpipev"


# Schedules whose backward is split into B (input grad) and W (weight grad).
SPLIT_BACKWARD = frozenset({ScheduleName.zb_h1, ScheduleName.zbv, ScheduleName.dualpipev})
# Schedules that place two chunks per rank in a V: chunk 0 goes down, chunk 1 comes back.
V_SHAPED = frozenset({ScheduleName.zbv, ScheduleName.dualpipev})
FORWARD_ONLY = frozenset({ScheduleName.naive})


class Action(NamedTuple):
    """One compute action; a NamedTuple because schedules hold hundreds of thousands."""

    kind: str  # "F" | "B" | "W"
    microbatch: int
    chunk: int = 0

    def compact(self, show_chunk: bool = False) -> str:
        """``F3``, or ``F3c1`` when chunks matter (torch prints stage ids instead)."""
        return f"{self.kind}{self.microbatch}" + (f"c{self.chunk}" if show_chunk else "")


class ScheduleError(ValueError):
    """A schedule cannot be built for the requested sizes; names the field to change."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


# Schedules whose runtime sends an overlapped F&B pair's, or a whole backward's, outputs only
# when the pair or the whole backward ends (app/core/simulate.py).
RELEASE_BY_UNIT = frozenset({ScheduleName.dualpipev})


def release_units(name: ScheduleName, row: list[Action], last_rank: bool) -> list[int]:
    """For each action of one rank's order, the index of the last action of its unit: the
    action whose end sends the unit's outputs (RELEASE_BY_UNIT). A DualPipeV unit is an
    overlapped pair, a forward then a whole backward of the other chunk (torch OVERLAP_F_B);
    as in torch's ScheduleDualPipeV, the last rank runs its first F0/B1 pair without overlap."""
    last = list(range(len(row)))
    if name not in RELEASE_BY_UNIT:
        return last
    skip_pair = last_rank
    for i in range(len(row) - 1):
        f, b = row[i], row[i + 1]
        if f.kind != "F" or b.kind != "B" or b.chunk == f.chunk or last[i] != i:
            continue
        if skip_pair:
            skip_pair = False
            continue
        j = i + 1
        if j + 1 < len(row) and row[j + 1] == Action("W", b.microbatch, b.chunk):
            j += 1  # the pair's backward is whole: its W is part of it
        for k in range(i, j + 1):
            last[k] = j
    return last


def chunks_per_rank(name: ScheduleName, virtual_stages: int) -> int:
    if name in V_SHAPED:
        return 2
    return virtual_stages if name == ScheduleName.interleaved else 1


def virtual_stage(name: ScheduleName, rank: int, chunk: int, pp: int) -> int:
    """Position of (rank, chunk) in the model, 0 = embedding side."""
    if name in V_SHAPED:
        return rank if chunk == 0 else 2 * pp - 1 - rank
    return chunk * pp + rank


def stage_location(name: ScheduleName, vstage: int, pp: int) -> tuple[int, int]:
    """Inverse of ``virtual_stage``: the (rank, chunk) that holds virtual stage ``vstage``."""
    if name in V_SHAPED:
        return (vstage, 0) if vstage < pp else (2 * pp - 1 - vstage, 1)
    return vstage % pp, vstage // pp


def validate(name: ScheduleName, pp: int, microbatches: int, virtual_stages: int) -> None:
    if pp < 1 or microbatches < 1:
        raise ScheduleError("microbatches", "pp and microbatches must be >= 1")
    if name == ScheduleName.interleaved:
        if virtual_stages < 2:
            raise ScheduleError(
                "virtual_stages", "interleaved needs virtual_stages >= 2 chunks per rank"
            )
        rounds = interleaved_rounds(pp, microbatches)
        if microbatches % rounds != 0:
            # torch ScheduleInterleaved1F1B (torch/distributed/pipelining/schedules.py) runs
            # max(1, m // p) rounds of equal size and refuses an m they do not divide.
            raise ScheduleError(
                "microbatches",
                f"interleaved (torch's rule) needs microbatches divisible by its "
                f"max(1, microbatches // pp) = {rounds} rounds: {microbatches} % {rounds} != 0",
            )
    elif name not in V_SHAPED and virtual_stages != 1:
        raise ScheduleError(
            "virtual_stages", f"{name.value} runs one chunk per rank: virtual_stages must be 1"
        )
    if name in V_SHAPED and virtual_stages not in (1, 2):
        raise ScheduleError("virtual_stages", f"{name.value} always places 2 chunks per rank (a V)")
    if name == ScheduleName.dualpipev and microbatches < 2 * pp:
        # torch's ScheduleDualPipeV needs at least one micro-batch per virtual stage.
        raise ScheduleError(
            "microbatches",
            f"dualpipev needs microbatches >= 2*pp (one per virtual stage), got {microbatches}",
        )


@gc_paused
def build(
    name: ScheduleName | str, pp: int, microbatches: int, virtual_stages: int = 1
) -> list[list[Action]]:
    """Per-rank ordered actions. Raises ScheduleError for sizes the schedule cannot run."""
    name = ScheduleName(name)
    validate(name, pp, microbatches, virtual_stages)
    builder = _BUILDERS[name]
    return [builder(rank, pp, microbatches, virtual_stages) for rank in range(pp)]


def _naive(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # The article's demo: forward-only fill and drain, stage s busy with micro-batch t - s.
    return [Action("F", i) for i in range(m)]


def _gpipe(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Huang et al. 2019 (GPipe): all forwards, then all backwards; torch ScheduleGPipe order.
    return [Action("F", i) for i in range(m)] + [Action("B", i) for i in range(m)]


def _one_f_one_b(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Narayanan et al. 2021 §2.2.1 (PipeDream-Flush): p-1-rank warm-up forwards, then 1F1B.
    warmup = min(pp - 1 - rank, m)
    ops = [Action("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        ops += [Action("F", warmup + i), Action("B", i)]
    return ops + [Action("B", i) for i in range(m - warmup, m)]


def _zb_h1(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Qi et al. ICLR 2024 §3.1 (ZB-H1): 1F1B's F/B order and memory, with each rank's W
    # passes deferred by `rank` backwards so they fill the cool-down wait for downstream B;
    # bubble drops from (p-1)(F+B+W) to (p-1)(F+B-W).
    ops: list[Action] = []
    done_b = done_w = 0
    for a in _one_f_one_b(rank, pp, m, v):
        ops.append(a)
        if a.kind == "B":
            done_b += 1
            if done_b - done_w > rank:
                ops.append(Action("W", done_w))
                done_w += 1
    return ops + [Action("W", i) for i in range(done_w, m)]


def interleaved_rounds(pp: int, m: int) -> int:
    """Rounds of micro-batches per chunk, as torch's flexible interleaving counts them."""
    return max(1, m // pp)


def _interleaved(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Narayanan et al. 2021 §2.2.2 in torch ScheduleInterleaved1F1B's flexible form
    # (torch/distributed/pipelining/schedules.py, _get_warmup_ops and _get_1f1b_rank_ops):
    # each chunk runs rounds of m // rounds micro-batches, the earlier micro-batch first;
    # warm-up (v-1)*round + 2*(p-1-rank). With m % p == 0 a round is p, the paper's order.
    per_round = m // interleaved_rounds(pp, m)
    total = m * v
    warmup = min((v - 1) * per_round + 2 * (pp - 1 - rank), total)
    nxt_f, nxt_b = [0] * v, [0] * v

    def forward(step: int) -> Action:
        chunk = (step // per_round) % v
        nxt_f[chunk] += 1
        return Action("F", nxt_f[chunk] - 1, chunk)

    def backward(step: int) -> Action:
        chunk = v - 1 - ((step - warmup) // per_round) % v
        nxt_b[chunk] += 1
        return Action("B", nxt_b[chunk] - 1, chunk)

    ops = [forward(op) for op in range(warmup)]
    for op in range(warmup, total):
        ops += [forward(op), backward(op)]
    return ops + [backward(op) for op in range(total, total + warmup)]


def _v_builder(order: Callable[[int, int, int], list[schedules_v.Op]]) -> Callable:
    # schedules_v gives plain (kind, microbatch, chunk) tuples, so it does not import Action.
    return lambda rank, pp, m, v: [Action._make(op) for op in order(rank, pp, m)]


_BUILDERS = {
    ScheduleName.naive: _naive,
    ScheduleName.gpipe: _gpipe,
    ScheduleName.one_f_one_b: _one_f_one_b,
    ScheduleName.interleaved: _interleaved,
    ScheduleName.zb_h1: _zb_h1,
    ScheduleName.zbv: _v_builder(schedules_v.zbv),
    ScheduleName.dualpipev: _v_builder(schedules_v.dualpipev),
}


def compact(actions: list[list[Action]], show_chunk: bool) -> list[list[str]]:
    return [[a.compact(show_chunk) for a in rank] for rank in actions]
