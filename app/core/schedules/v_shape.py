"""The V-placement schedules ZB-V and DualPipeV, as per-rank orders of plain tuples.

Both place two chunks per rank in a V: chunk 0 of rank r is virtual stage r and chunk 1 is
2p-1-r, so rank p-1 holds the two middle stages and rank 0 holds the first and the last.
Both split the backward into B (input grad) and W (weight grad).

Each builder returns ``(kind, microbatch, chunk)`` tuples; ``app.core.schedules`` wraps them
as Actions. This module imports nothing from there, so there is no import cycle.

Orders follow torch 2.13, torch/distributed/pipelining/schedules.py
(ScheduleZBVZeroBubble and ScheduleDualPipeV ``_calculate_single_rank_operations``).
Each builder below is its own phase-by-phase version of that algorithm.
"""

from __future__ import annotations

from collections import deque

Op = tuple[str, int, int]  # (kind "F" | "B" | "W", microbatch, chunk)


class _Counter:
    """Gives out the next micro-batch per (kind, chunk), so each phase only names the step."""

    def __init__(self) -> None:
        self._next: dict[tuple[str, int], int] = {}

    def take(self, kind: str, chunk: int) -> Op:
        i = self._next.get((kind, chunk), 0)
        self._next[(kind, chunk)] = i + 1
        return kind, i, chunk

    def count(self, kind: str, chunk: int) -> int:
        return self._next.get((kind, chunk), 0)


# --- ZB-V ------------------------------------------------------------------------------------


def zbv(rank: int, pp: int, m: int) -> list[Op]:
    """ZB-V: Qi et al. 2024, "Zero Bubble Pipeline Parallelism" (arXiv 2401.10241) §6.

    Each rank has the same peak activation memory as 1F1B: 2p chunk-microbatches, which is
    p full-stage micro-batches. When T_F = T_B = T_W and m >= 2p-1, the only idle time is
    the p-1 step warm-up skew. Torch's ScheduleZBVZeroBubble builds the order for n = max(2p-1, m)
    micro-batches, so that the warm-up is complete, and then drops micro-batches >= m.
    Dropping whole micro-batches keeps every dependency, so small m still runs.
    """
    n = max(2 * pp - 1, m)
    c, ops = _Counter(), []

    def run(*steps: str, times: int = 1) -> None:
        for _ in range(times):
            ops.extend(c.take(s[0], int(s[1])) for s in steps)

    # Warm-up. Rank r's chunk-0 forwards reach the bottom of the V and come back up on
    # chunk 1. Rank r gets its first chunk-1 input after 2(p-r)-1 of its own chunk-0 F.
    run("F0", times=2 * (pp - rank) - 1)
    run("F1", "F0", times=rank)
    # The first chunk-1 backwards run at once, with W right behind B (no W is held back).
    run("F1", "B1", "W1", times=pp - rank)
    # Steady state: F B W on chunk 0, then on chunk 1, until every forward has run.
    while c.count("F", 1) < c.count("F", 0) or c.count("F", 0) < n:
        if c.count("F", 0) < n:
            run("F0")
        run("B0", "W0", "F1", "B1", "W1")
    # Cool-down. Run the input-grad B first, because downstream ranks wait on them. Hold
    # W back to fill the drain (the zero-bubble idea, §3), chunk 1's before chunk 0's.
    run("B0", "B1", times=rank)
    run("B0", "W0", times=pp - rank)
    run("W1", times=c.count("B", 1) - c.count("W", 1))
    run("W0", times=c.count("B", 0) - c.count("W", 0))
    return [op for op in ops if op[1] < m]


# --- DualPipeV -------------------------------------------------------------------------------


class _DualPipeRank:
    """One rank's DualPipeV order. B is either full (W follows at once) or input-only.
    An input-only B queues its W, and ``w()`` later runs the oldest queued W in a free slot.
    """

    def __init__(self) -> None:
        self.c, self.ops = _Counter(), []
        self.held: deque[Op] = deque()

    def f(self, chunk: int) -> None:
        self.ops.append(self.c.take("F", chunk))

    def b(self, chunk: int, split: bool = False) -> None:
        op = self.c.take("B", chunk)
        self.ops.append(op)
        w = ("W", op[1], chunk)
        if split:
            self.held.append(w)
        else:
            self.ops.append(w)

    def w(self) -> None:
        if self.held:
            self.ops.append(self.held.popleft())


def dualpipev(rank: int, pp: int, m: int) -> list[Op]:
    """DualPipeV: DeepSeek-V3 (arXiv 2412.19437) §3.2.1 DualPipe, "cut in half" into a V.

    Source: github.com/deepseek-ai/DualPipe, dualpipev.py. The torch port is
    ScheduleDualPipeV, which needs m >= 2p (one micro-batch per virtual stage). In the
    main phase a forward of one chunk runs overlapped with a backward of the other chunk,
    so the compute of one hides the communication of the other. Torch lists such a pair as
    one OVERLAP_F_B action with sub-actions (F, full B). Here the pair is flattened in that
    order. Torch runs the last rank's first F0/B1 pair without overlap, but it lists the
    same F then B, so the flat order is the same either way.
    """
    r = _DualPipeRank()
    _dualpipev_fill(r, rank, pp)
    for _ in range(m - 2 * pp + rank + 1):  # main phase: F0+B1, F1+B0 overlapped pairs
        r.f(0)
        r.b(1)
        r.f(1)
        r.b(0)
    _dualpipev_drain(r, rank, pp)
    return r.ops


def _dualpipev_fill(r: _DualPipeRank, rank: int, pp: int) -> None:
    for _ in range(2 * (pp - rank - 1)):  # chunk-0 forwards that fill the way down
        r.f(0)
    for _ in range(rank + 1):  # chunk-1 inputs start to come back up the V
        r.f(0)
        r.f(1)
    for _ in range(pp - rank - 1):  # first chunk-1 backwards. Their W runs at once.
        r.b(1, split=True)
        r.w()
        r.f(1)


def _dualpipev_drain(r: _DualPipeRank, rank: int, pp: int) -> None:
    for _ in range(pp - rank - 1):  # chunk-1 backward, then F1 overlapped with B0
        r.b(1)
        r.f(1)
        r.b(0)
    # Last B1/B0 pairs. From the middle pair on, B is input-only and its W is held to
    # fill the drain. Odd ranks switch one B earlier than even ranks: the switch starts
    # at B1 on odd ranks and at B0 on even ranks (DualPipe's "second half zero bubble").
    half = (rank + 1) // 2
    for i in range(rank + 1):
        r.b(1, split=i > half or (i == half and rank % 2 == 1))
        r.b(0, split=i >= half)
    for _ in range(pp - rank - 1):  # each held W goes before the next input-only B0
        r.w()
        r.b(0, split=True)
    while r.held:  # then the remaining held W, oldest first
        r.w()
