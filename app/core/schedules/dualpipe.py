"""DualPipe, DeepSeek-V3's bidirectional pipeline, as per-rank orders and their message plan.

DeepSeek-V3 (arXiv 2412.19437) §3.2.1; the order is that of github.com/deepseek-ai/DualPipe,
dualpipe/dualpipe.py (``DualPipe.step``), written here as a small model of that runtime.

Two copies of the parameters: rank r holds stage r of the "down" copy (chunk 0, micro-batches
enter at rank 0) and stage p-1-r of the "up" copy (chunk 1, micro-batches enter at rank p-1).
Micro-batches 0..m/2-1 run down, m/2..m-1 run up. Read as one chain of 2p stages (the down
copy's stages 0..p-1, then the up copy's as p..2p-1), the copies sit exactly as a V
(schedules.virtual_stage); the chain is cut between p-1 and p (schedules.stages_per_copy).

dualpipe.py names a rank's two modules by *phase*, and ranks in the second half swap them
(``phase ^= is_in_second_half``), so ``chunk = phase ^ second_half`` below. Like the runtime,
the model queues receives and sends and posts them together when the next compute starts
(``_commit_and_wait_comm``). So:

* an output leaves when the compute that ran last before its send call ends (``release``);
* a compute starts once every receive queued before it has arrived (``waits``): an
  overlapped pair's F also waits for its B's gradient, and some F/W wait for the next input.

Each builder gives plain ``(kind, microbatch, chunk)`` tuples (app.core.schedules wraps them),
so this module imports nothing from there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

Op = tuple[str, int, int]  # (kind "F" | "B" | "W", microbatch, chunk)
Slot = tuple[str, int, int]  # (kind, chunk, n): the n-th F or B of a chunk on this rank


def rule(pp: int, microbatches: int) -> tuple[str, str, str, dict[str, int]] | None:
    """(field, reason, message key, its params) when DualPipe cannot run these sizes:
    dualpipe.py's asserts in step()."""
    if pp % 2:
        template = "dualpipe needs an even pp (num_ranks % 2 == 0 in dualpipe.py), got {pp}"
        return "pp", template.format(pp=pp), "schedule.dualpipe_pp", {"pp": pp}
    if microbatches % 2 or microbatches < 2 * pp:
        template = (
            "dualpipe needs microbatches even and >= 2*pp (dualpipe.py: num_chunks % 2 == 0 "
            "and num_chunks >= num_ranks * 2), got {m} with pp={pp}"
        )
        params = {"m": microbatches, "pp": pp}
        return "microbatches", template.format(**params), "schedule.dualpipe_m", params
    return None


@dataclass
class Plan:
    """One rank's order and when its messages move (indices into ``ops``)."""

    ops: list[Op] = field(default_factory=list)
    release: list[int] = field(default_factory=list)  # release[i]: op whose end sends i's output
    waits: list[tuple[int, ...]] = field(default_factory=list)  # inputs awaited at op i's start
    pairs: list[tuple[int, int]] = field(default_factory=list)  # overlapped F&B: (first, last)


class _Rank:
    """A small model of one rank of DualPipe.step: computes, queued sends and receives."""

    def __init__(self, rank: int, pp: int, m: int) -> None:
        self.rank, self.pp, self.half_m = rank, pp, m // 2
        self.second = int(rank >= pp // 2)
        self.plan = Plan()
        self.count: dict[tuple[str, int], int] = {}  # computes done per (kind, chunk)
        self.sent: dict[tuple[str, int], int] = {}
        self.received: dict[tuple[str, int], int] = {}
        self.index: dict[Slot, int] = {}  # (kind, chunk, n) -> op index
        self.queued: list[Slot] = []  # receives posted at the next commit
        self.awaited: list[Slot] = []  # receives the next compute waits for
        self.waits: list[list[Slot]] = []
        self.held: deque[Op] = deque()  # W of zero-bubble backwards (WeightGradStore)

    # -- where a chunk sits ---------------------------------------------------------------
    def chunk(self, phase: int) -> int:
        return phase ^ self.second

    def first_stage(self, chunk: int) -> bool:
        return (self.rank, chunk) in ((0, 0), (self.pp - 1, 1))

    def last_stage(self, chunk: int) -> bool:
        return (self.rank, chunk) in ((self.pp - 1, 0), (0, 1))

    # -- computes -------------------------------------------------------------------------
    def _take(self, kind: str, chunk: int) -> int:
        n = self.count.get((kind, chunk), 0)
        self.count[(kind, chunk)] = n + 1
        return n

    def _emit(self, op: Op, slot: Slot | None) -> int:
        i = len(self.plan.ops)
        self.plan.ops.append(op)
        self.plan.release.append(i)
        self.waits.append(self.awaited)
        self.awaited = []
        if slot is not None:
            self.index[slot] = i
        return i

    def compute_f(self, phase: int) -> int:
        c = self.chunk(phase)
        n = self._take("F", c)
        return self._emit(("F", c * self.half_m + n, c), ("F", c, n))

    def compute_b(self, phase: int, zb: bool = False) -> int:
        c = self.chunk(phase)
        n = self._take("B", c)
        mb = c * self.half_m + n
        i = self._emit(("B", mb, c), ("B", c, n))
        if zb:  # WeightGradStore: the weight gradient waits in a FIFO for a later W
            self.held.append(("W", mb, c))
            return i
        return self._emit(("W", mb, c), None)  # a whole backward: its W runs at once

    # -- messages -------------------------------------------------------------------------
    def recv(self, kind: str, phase: int) -> None:
        c = self.chunk(phase)
        skip = self.first_stage(c) if kind == "F" else self.last_stage(c)
        if not skip:
            n = self.received.get((kind, c), 0)
            self.received[(kind, c)] = n + 1
            self.queued.append((kind, c, n))

    def send(self, kind: str, phase: int) -> None:
        c = self.chunk(phase)
        skip = self.last_stage(c) if kind == "F" else self.first_stage(c)
        if not skip:
            n = self.sent.get((kind, c), 0)
            self.sent[(kind, c)] = n + 1
            # Posted at the next commit, which is right after the latest compute ends.
            self.plan.release[self.index[(kind, c, n)]] = len(self.plan.ops) - 1

    def commit(self) -> None:
        self.awaited, self.queued = self.awaited + self.queued, []

    # -- dualpipe.py's chunk helpers --------------------------------------------------------
    def forward(self, phase: int, recv: bool = True, send: bool = True) -> None:
        if recv:
            self.recv("F", phase)
        self.commit()
        self.compute_f(phase)
        if send:
            self.send("F", phase)

    def backward(self, phase: int, zb: bool = False, recv: bool = True, send: bool = True) -> None:
        if recv:
            self.recv("B", phase)
        self.commit()
        self.compute_b(phase, zb)
        if send:
            self.send("B", phase)

    def forward_backward(self, phase0: int, phase1: int, recv0: bool = True) -> None:
        """An overlapped pair: F of one chunk with a whole backward of the other."""
        if recv0:
            self.recv("F", phase0)
        self.recv("B", phase1)
        self.commit()
        first = self.compute_f(phase0)
        self.compute_b(phase1)
        self.plan.pairs.append((first, len(self.plan.ops) - 1))
        self.send("F", phase0)
        self.send("B", phase1)

    def weight(self) -> None:
        self.commit()
        if self.held:
            self._emit(self.held.popleft(), None)

    def finish(self) -> Plan:
        self.plan.waits = [
            tuple(self.index[s] for s in slots if self.index[s] != i)
            for i, slots in enumerate(self.waits)
        ]
        return self.plan


def plan(rank: int, pp: int, m: int) -> Plan:
    """DualPipe.step's eight steps for one rank (dualpipe.py), with half_rank h = min(r,
    p-1-r), P = p/2 ranks per half and m/2 micro-batches each way."""
    r = _Rank(rank, pp, m)
    half_ranks, half_m = pp // 2, m // 2
    h = min(rank, pp - 1 - rank)
    middle = h == half_ranks - 1
    for _ in range((half_ranks - h - 1) * 2):  # 1: nF0, fill the way down
        r.forward(0)
    r.recv("F", 0)
    for i in range(h + 1):  # 2: nF0F1, off the middle ranks F0's output waits for F1
        r.forward(0, recv=False, send=middle)
        r.recv("F", 0)
        r.forward(1, send=(not middle) or i < h)
        if not middle:
            r.send("F", 0)
    for _ in range(half_ranks - h - 1):  # 3: nB1W1F1, zero bubble: W fills the wait for F1
        r.backward(1, zb=True)
        r.recv("F", 1)
        r.weight()
        r.forward(1, recv=False)
    _main(r, half_m - pp + h + 1, middle)
    for _ in range(half_ranks - h - 1):  # 5: nB1F1B0
        r.backward(1)
        r.forward_backward(1, 0)
    zb = False
    for i in range(h + 1):  # 6: nB1B0, the second half of them zero-bubble
        zb = zb or (i == (h + 1) // 2 and h % 2 == 1)
        r.backward(1, zb=zb)
        zb = zb or (i == (h + 1) // 2 and h % 2 == 0)
        r.backward(0, zb=zb)
    for _ in range(half_ranks - h - 1):  # 7: nWB0
        r.weight()
        r.backward(0, zb=True)
    for _ in range(h + 1):  # 8: nW, the held weight gradients
        r.weight()
    return r.finish()


def _main(r: _Rank, steps: int, middle: bool) -> None:
    """Step 4, nF0B1F1B0: overlapped pairs; the middle ranks run their first F0 and B1 apart
    ("we don't overlap these two chunks to further reduce bubble size") and send after B1."""
    for i in range(steps):
        if i == 0 and middle:
            r.forward(0, recv=False, send=False)
            r.send("F", 1)
            r.backward(1, send=False)
            r.send("F", 0)
            r.send("B", 1)
        else:
            r.forward_backward(0, 1, recv0=i > 0)
        r.forward_backward(1, 0)


def dualpipe(rank: int, pp: int, m: int) -> list[Op]:
    return plan(rank, pp, m).ops
