"""Pipeline schedules as data: one ordered list of actions per pipeline rank.

``F`` is a forward, ``B`` the backward (input gradient only where the schedule splits the
backward, the whole backward otherwise) and ``W`` the weight gradient. ``chunk`` is the
model chunk on the rank (0 when there is one chunk per rank).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from functools import partial
from typing import NamedTuple

from app.core.schedules import dualpipe, torch_orders, v_shape, zero_bubble
from app.core.support.gc_pause import gc_paused


class ScheduleName(str, Enum):
    naive = "naive"
    gpipe = "gpipe"
    one_f_one_b = "1f1b"
    interleaved = "interleaved"
    looped_bfs = "looped-bfs"
    zb_h1 = "zb-h1"
    zb_h2 = "zb-h2"
    interleaved_zb = "interleaved-zb"
    zbv = "zbv"
    dualpipev = "dualpipev"
    dualpipe = "dualpipe"


# Schedules whose backward is split into B (input grad) and W (weight grad).
SPLIT_BACKWARD = frozenset(
    {
        ScheduleName.zb_h1,
        ScheduleName.zb_h2,
        ScheduleName.interleaved_zb,
        ScheduleName.zbv,
        ScheduleName.dualpipev,
        ScheduleName.dualpipe,
    }
)
# Schedules that place two chunks per rank in a V: chunk 0 goes down, chunk 1 comes back.
V_SHAPED = frozenset({ScheduleName.zbv, ScheduleName.dualpipev, ScheduleName.dualpipe})
# Schedules that hold two copies of the parameters (DualPipe): read as one chain of 2p
# stages, down copy then up copy, they sit as a V, cut between p-1 and p
# (app/core/schedules/dualpipe.py). Each micro-batch runs one copy, whole.
TWO_COPIES = frozenset({ScheduleName.dualpipe})
FORWARD_ONLY = frozenset({ScheduleName.naive})
# Schedules that place v >= 2 chunks per rank interleaved: chunk c of rank r is stage c*p + r.
MULTI_CHUNK = frozenset(
    {ScheduleName.interleaved, ScheduleName.looped_bfs, ScheduleName.interleaved_zb}
)


class Action(NamedTuple):
    """One compute action; a NamedTuple because schedules hold hundreds of thousands."""

    kind: str  # "F" | "B" | "W"
    microbatch: int
    chunk: int = 0

    def compact(self, show_chunk: bool = False) -> str:
        """``F3``, or ``F3c1`` when chunks matter (torch prints stage ids instead)."""
        return f"{self.kind}{self.microbatch}" + (f"c{self.chunk}" if show_chunk else "")


# Action(kind, microbatch, chunk) without NamedTuple's Python-level __new__ (or _make): the
# same tuple, at C speed, for the builders that make hundreds of thousands of them.
_action = partial(tuple.__new__, Action)


class ScheduleError(ValueError):
    """A schedule cannot be built for the requested sizes; names the field to change.
    ``key`` and ``params``, when given, name the reason in the catalogues' ``errors`` group
    (as ScenarioError's do); ``keyed`` fills the English template into ``reason``."""

    def __init__(
        self, field: str, reason: str, key: str | None = None, params: dict | None = None
    ) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason
        self.key, self.params = key, dict(params or {})

    @classmethod
    def keyed(cls, field: str, key: str, template: str, /, **params: object) -> ScheduleError:
        return cls(field, template.format(**params), key, params)


# Schedules whose runtime sends an overlapped F&B pair's, or a whole backward's, outputs only
# when the pair or the whole backward ends (app/core/simulate/timeline.py).
RELEASE_BY_UNIT = frozenset({ScheduleName.dualpipev, ScheduleName.dualpipe})


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
    return virtual_stages if name in MULTI_CHUNK else 1


def virtual_stage(name: ScheduleName, rank: int, chunk: int, pp: int) -> int:
    """Position of (rank, chunk) in the model, 0 = embedding side."""
    if name in V_SHAPED:
        return rank if chunk == 0 else 2 * pp - 1 - rank
    return chunk * pp + rank


def stages_per_copy(name: ScheduleName, pp: int, chunks: int) -> int:
    """Virtual stages one micro-batch runs through: all of them, or one copy's p (DualPipe)."""
    return pp if name in TWO_COPIES else pp * chunks


def stage_location(name: ScheduleName, vstage: int, pp: int) -> tuple[int, int]:
    """Inverse of ``virtual_stage``: the (rank, chunk) that holds virtual stage ``vstage``."""
    if name in V_SHAPED:
        return (vstage, 0) if vstage < pp else (2 * pp - 1 - vstage, 1)
    return vstage % pp, vstage // pp


def validate(name: ScheduleName, pp: int, microbatches: int, virtual_stages: int) -> None:
    if pp < 1 or microbatches < 1:
        raise ScheduleError.keyed(
            "microbatches", "schedule.positive", "pp and microbatches must be >= 1"
        )
    if name in MULTI_CHUNK:
        _check_multi_chunk(name, pp, microbatches, virtual_stages)
    elif name not in V_SHAPED and virtual_stages != 1:
        raise ScheduleError.keyed(
            "virtual_stages", "schedule.one_chunk",
            "{schedule} runs one chunk per rank: virtual_stages must be 1", schedule=name.value,
        )  # fmt: skip
    if name in V_SHAPED and virtual_stages not in (1, 2):
        raise ScheduleError.keyed(
            "virtual_stages", "schedule.v_shape",
            "{schedule} always places 2 chunks per rank (a V)", schedule=name.value,
        )  # fmt: skip
    refused = dualpipe.rule(pp, microbatches) if name == ScheduleName.dualpipe else None
    if refused:
        raise ScheduleError(*refused)
    if name == ScheduleName.dualpipev and microbatches < 2 * pp:
        # torch's ScheduleDualPipeV needs at least one micro-batch per virtual stage.
        raise ScheduleError.keyed(
            "microbatches", "schedule.dualpipev_m",
            "dualpipev needs microbatches >= 2*pp (one per virtual stage), got {m}", m=microbatches,
        )  # fmt: skip


def _check_multi_chunk(name: ScheduleName, pp: int, microbatches: int, v: int) -> None:
    if v < 2:
        raise ScheduleError.keyed(
            "virtual_stages", "schedule.multi_chunk",
            "{schedule} needs virtual_stages >= 2 chunks per rank", schedule=name.value,
        )  # fmt: skip
    rounds = interleaved_rounds(pp, microbatches)
    if name != ScheduleName.looped_bfs and microbatches % rounds != 0:
        # torch ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble
        # (torch/distributed/pipelining/schedules.py) run max(1, m // p) rounds of equal
        # size and refuse an m they do not divide.
        raise ScheduleError.keyed(
            "microbatches", "schedule.rounds",
            "{schedule} (torch's rule) needs microbatches divisible by its "
            "max(1, microbatches // pp) = {rounds} rounds: {m} % {rounds} != 0",
            schedule=name.value, rounds=rounds, m=microbatches,
        )  # fmt: skip


@gc_paused
def build(
    name: ScheduleName | str, pp: int, microbatches: int, virtual_stages: int = 1
) -> list[list[Action]]:
    """Per-rank ordered actions. Raises ScheduleError for sizes the schedule cannot run."""
    name = ScheduleName(name)
    validate(name, pp, microbatches, virtual_stages)
    if name == ScheduleName.interleaved:  # the ranks share one set of steps
        steps = _interleaved_steps(pp, microbatches, virtual_stages)
        return [_interleaved(r, pp, microbatches, virtual_stages, steps) for r in range(pp)]
    builder = _BUILDERS[name]
    return [builder(rank, pp, microbatches, virtual_stages) for rank in range(pp)]


def _naive(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # The article's demo: forward-only fill and drain, stage s busy with micro-batch t - s.
    return [_action(("F", i, 0)) for i in range(m)]


def _gpipe(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Huang et al. 2019 (GPipe): all forwards, then all backwards; torch ScheduleGPipe order.
    return [_action(("F", i, 0)) for i in range(m)] + [_action(("B", i, 0)) for i in range(m)]


def _one_f_one_b(rank: int, pp: int, m: int, v: int) -> list[Action]:
    # Narayanan et al. 2021 §2.2.1 (PipeDream-Flush): p-1-rank warm-up forwards, then 1F1B.
    warmup = min(pp - 1 - rank, m)
    ops = [_action(("F", i, 0)) for i in range(warmup)]
    for i in range(m - warmup):
        ops += [_action(("F", warmup + i, 0)), _action(("B", i, 0))]
    return ops + [_action(("B", i, 0)) for i in range(m - warmup, m)]


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
                ops.append(_action(("W", done_w, 0)))
                done_w += 1
    return ops + [_action(("W", i, 0)) for i in range(done_w, m)]


def interleaved_rounds(pp: int, m: int) -> int:
    """Rounds of micro-batches per chunk, as torch's flexible interleaving counts them."""
    return max(1, m // pp)


def _interleaved(rank: int, pp: int, m: int, v: int, steps: _Steps | None = None) -> list[Action]:
    # Narayanan et al. 2021 §2.2.2 in torch ScheduleInterleaved1F1B's flexible form
    # (torch/distributed/pipelining/schedules.py, _get_warmup_ops and _get_1f1b_rank_ops):
    # each chunk runs rounds of m // rounds micro-batches, the earlier micro-batch first;
    # warm-up (v-1)*round + 2*(p-1-rank). With m % p == 0 a round is p, the paper's order.
    forwards, backwards = steps or _interleaved_steps(pp, m, v)
    total = m * v
    warmup = min((v - 1) * (m // interleaved_rounds(pp, m)) + 2 * (pp - 1 - rank), total)
    steady = [forwards[0]] * (2 * (total - warmup))
    steady[0::2], steady[1::2] = forwards[warmup:], backwards[: total - warmup]
    return [*forwards[:warmup], *steady, *backwards[total - warmup :]]


# Every rank's forwards and backwards in step order: only the warm-up differs by rank.
_Steps = tuple[tuple[Action, ...], tuple[Action, ...]]


def _interleaved_steps(pp: int, m: int, v: int) -> _Steps:
    """Step k is in round r = k // round, of chunk r % v (backwards: v-1 - r % v); that
    chunk's micro-batches so far are (r // v) full rounds plus k % round."""
    per_round = m // interleaved_rounds(pp, m)
    steps = [((k // per_round) % v, (k // per_round // v) * per_round + k % per_round)
             for k in range(m * v)]  # fmt: skip
    make = tuple.__new__  # skips NamedTuple's Python-level __new__
    return (
        tuple(make(Action, ("F", mb, chunk)) for chunk, mb in steps),
        tuple(make(Action, ("B", mb, v - 1 - chunk)) for chunk, mb in steps),
    )


def _v_builder(order: Callable[[int, int, int], list[v_shape.Op]]) -> Callable:
    # schedules_v gives plain (kind, microbatch, chunk) tuples, so it does not import Action.
    return lambda rank, pp, m, v: list(map(_action, order(rank, pp, m)))


def _chunked(order: Callable[[int, int, int, int], list[torch_orders.Op]]) -> Callable:
    # As _v_builder, for the builders that take the chunks per rank too.
    return lambda rank, pp, m, v: list(map(_action, order(rank, pp, m, v)))


_BUILDERS = {
    ScheduleName.naive: _naive,
    ScheduleName.gpipe: _gpipe,
    ScheduleName.one_f_one_b: _one_f_one_b,
    ScheduleName.interleaved: _interleaved,
    ScheduleName.zb_h1: _zb_h1,
    ScheduleName.looped_bfs: _chunked(torch_orders.looped_bfs),
    ScheduleName.zb_h2: _v_builder(zero_bubble.zb_h2),
    ScheduleName.interleaved_zb: _chunked(torch_orders.interleaved_zb),
    ScheduleName.zbv: _v_builder(v_shape.zbv),
    ScheduleName.dualpipev: _v_builder(v_shape.dualpipev),
    ScheduleName.dualpipe: _v_builder(dualpipe.dualpipe),
}


def compact(actions: list[list[Action]], show_chunk: bool) -> list[list[str]]:
    return [[a.compact(show_chunk) for a in rank] for rank in actions]
