"""ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241 §3.1).

Plain ``(kind, microbatch, chunk)`` tuples, as in ``schedules_v``, so this module does not
import ``schedules`` (which imports it). One chunk per rank; the backward is split into B
(input gradient) and W (weight gradient).
"""

from __future__ import annotations

Op = tuple[str, int, int]


def deferred_w(rank: int, pp: int, m: int, warmup: int, lag: int) -> list[Op]:
    """1F1B's F/B order after ``warmup`` forwards, each W emitted once ``lag`` more B's are
    done than W's, the rest at the end (ZB-H1 is warmup p-1-rank, lag rank; §3.1)."""
    warmup = min(warmup, m)
    base = [("F", i, 0) for i in range(warmup)]
    for i in range(m - warmup):
        base += [("F", warmup + i, 0), ("B", i, 0)]
    base += [("B", i, 0) for i in range(m - warmup, m)]
    ops: list[Op] = []
    done_b = done_w = 0
    for op in base:
        ops.append(op)
        if op[0] == "B":
            done_b += 1
            if done_b - done_w > lag:
                ops.append(("W", done_w, 0))
                done_w += 1
    return ops + [("W", i, 0) for i in range(done_w, m)]


def zb_h2(rank: int, pp: int, m: int) -> list[Op]:
    # Qi et al. 2024 §3.1, Figure 3 (bottom): twice ZB-H1's warm-up (2p-1 forwards in flight
    # on stage 0 before its first B) and twice its W lag (2*rank, so the last stage's W's fill
    # the drain): a parallelogram, each stage busy from its first action to its last, bubble
    # (p-1)(F+B-2W) = 0 at F = B = W once m >= 2p-1. Figure 3's stage 1 and 4 orders exactly.
    return deferred_w(rank, pp, m, 2 * (pp - 1 - rank), 2 * rank)
