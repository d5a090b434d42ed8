"""torch 2.13's ScheduleLoopedBFS and ScheduleInterleavedZeroBubble orders
(torch/distributed/pipelining/schedules.py), action for action, without their None padding.

Plain ``(kind, microbatch, chunk)`` tuples, as in ``schedules_v``, so this module does not
import ``schedules``. Placement is interleaved: chunk c of rank r is virtual stage c*pp + r.
"""

from __future__ import annotations

Op = tuple[str, int, int]


def looped_bfs(rank: int, pp: int, m: int, v: int) -> list[Op]:
    # Lamy-Poirier 2022 (arXiv 2211.05953), breadth-first, as torch ScheduleLoopedBFS
    # ._calculate_single_rank_operations: every micro-batch of chunk 0, then of chunk 1, ...;
    # then the whole backwards from the last chunk back, the last micro-batch first.
    ops = [("F", mb, c) for c in range(v) for mb in range(m)]
    return ops + [("B", mb, c) for c in reversed(range(v)) for mb in reversed(range(m))]


def interleaved_zb(rank: int, pp: int, m: int, v: int) -> list[Op]:
    # torch ScheduleInterleavedZeroBubble (Qi et al. 2024's ZB1P with interleaving):
    # _get_warmup_ops with multiply_factor=1, warm-up (v-1)*round + (p-1-rank); then
    # _get_1f1b_rank_ops(enable_zero_bubble=True): F then B each step, and from step
    # warmup + rank on a W after each B, for the oldest backward without one; W's left at the end.
    per_round = m // max(1, m // pp)  # torch: n_microbatches // number_of_rounds
    total = m * v
    warmup = min((v - 1) * per_round + (pp - 1 - rank), total)
    next_mb = {"F": [0] * v, "B": [0] * v}
    ops: list[Op] = []

    def take(kind: str, chunk: int) -> Op:
        next_mb[kind][chunk] += 1
        return (kind, next_mb[kind][chunk] - 1, chunk)

    backwards: list[Op] = []
    weights = 0
    for op in range(total + warmup):
        if op < total:
            ops.append(take("F", (op // per_round) % v))
        if op >= warmup:
            backwards.append(take("B", v - 1 - ((op - warmup) // per_round) % v))
            ops.append(backwards[-1])
            if op - warmup >= rank:
                ops.append(("W",) + backwards[weights][1:])
                weights += 1
    return ops + [("W",) + b[1:] for b in backwards[weights:]]
