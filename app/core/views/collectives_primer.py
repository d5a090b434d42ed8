"""Ring all-reduce, step by step, on one group of the mesh: reduce-scatter, then all-gather.

The buffer is cut into n chunks, one per ring position. In reduce-scatter step k (0-based),
position i sends chunk (i - k) mod n to position i + 1, which adds it to its own copy; after
n - 1 steps position i holds the full sum of chunk (i + 1) mod n. All-gather step k then sends
chunk (i + 1 - k) mod n on, and the receiver overwrites its copy. Patarasuk & Yuan 2009
(JPDC 69(2), "Bandwidth optimal all-reduce algorithms", §3) and the NCCL docs (Collective
Operations: AllReduce = ReduceScatter + AllGather) describe this ring.

Holdings are simulated, not looked up: each chunk a rank holds is the set of ring positions
whose data it sums, so the test that every rank ends with the full sum checks the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

# Past this many ranks the per-step table (n x n chunks, 2(n-1) steps) is a wall, not a
# lesson: larger groups get their byte counts, and the page says the ring is not drawn.
MAX_DRAWN_RING = 16

Holdings = list[list[frozenset[int]]]  # holdings[position][chunk] = positions summed in


@dataclass(frozen=True)
class Send:
    src: int  # global rank
    dst: int
    chunk: int


@dataclass(frozen=True)
class RingStep:
    index: int  # 1 .. 2(n-1); 0 is the start, before any send
    phase: str  # "start", "reduce_scatter" or "all_gather"
    sends: tuple[Send, ...]
    holdings: Holdings


def _sends(phase: str, k: int, n: int) -> list[tuple[int, int]]:
    """(sender position, chunk) of reduce-scatter or all-gather step k (0-based)."""
    shift = 0 if phase == "reduce_scatter" else 1
    return [(i, (i + shift - k) % n) for i in range(n)]


def _apply(held: Holdings, phase: str, moves: list[tuple[int, int]]) -> Holdings:
    """Every send of one step happens at once: receivers read the senders' copies from
    before the step (a ring step is one simultaneous exchange)."""
    n = len(held)
    out = [list(row) for row in held]
    for i, chunk in moves:
        dst = (i + 1) % n
        sent = held[i][chunk]
        # Reduce-scatter adds the incoming partial sum; all-gather overwrites with the full one.
        out[dst][chunk] = held[dst][chunk] | sent if phase == "reduce_scatter" else sent
    return out


def ring_steps(ranks: list[int]) -> list[RingStep]:
    """The start and the 2(n-1) steps of a ring all-reduce over ``ranks`` (ring order)."""
    n = len(ranks)
    held: Holdings = [[frozenset({i}) for _ in range(n)] for i in range(n)]
    steps = [RingStep(0, "start", (), held)]
    # Patarasuk & Yuan 2009 §3: n - 1 reduce-scatter steps, then n - 1 all-gather steps.
    for phase in ("reduce_scatter", "all_gather"):
        for k in range(n - 1):
            moves = _sends(phase, k, n)
            held = _apply(held, phase, moves)
            sends = tuple(Send(ranks[i], ranks[(i + 1) % n], c) for i, c in moves)
            steps.append(RingStep(len(steps), phase, sends, held))
    return steps


def step_count(n: int) -> int:
    # Patarasuk & Yuan 2009 §3: a ring all-reduce takes 2(n-1) steps.
    return 2 * (n - 1)


def ring_json(ranks: list[int], size_bytes: float) -> dict[str, object]:
    """The ring as the page draws it: bytes per step and per rank, and, for groups up to
    MAX_DRAWN_RING, every step's sends and what each rank holds (how many ranks' data each
    of its chunks sums, out of n)."""
    n = len(ranks)
    chunk = size_bytes / n  # one of n equal chunks of the buffer
    total_steps = step_count(n)
    out: dict[str, object] = {
        "ranks": list(ranks),
        "n": n,
        "size_bytes": size_bytes,
        "chunk_bytes": chunk,
        "steps_total": total_steps,
        "reduce_scatter_steps": n - 1,
        # NCCL PERFORMANCE.md: each rank sends 2(n-1)/n of the buffer in a ring all-reduce.
        "per_rank_bytes": total_steps * chunk,
        "drawn": n <= MAX_DRAWN_RING,
        "steps": [],
    }
    if n <= MAX_DRAWN_RING:
        out["steps"] = [
            {
                "index": s.index,
                "phase": s.phase,
                "sends": [{"from": m.src, "to": m.dst, "chunk": m.chunk} for m in s.sends],
                "holds": [[len(c) for c in row] for row in s.holdings],
                "sent_bytes": chunk if s.sends else 0.0,
                "sent_so_far_bytes": s.index * chunk,
            }
            for s in ring_steps(ranks)
        ]
    return out
