"""The simulator's two passes: per-rank orders compiled to integer keys, then every action's
earliest start found in one pass (simulate.py turns what a pass finds into a Timeline).

``plain_pass`` runs every schedule whose outputs go out as each action ends; ``unit_pass``
those released by unit (schedules.RELEASE_BY_UNIT), through simulate_units.run_units. Both
return a ``Pass``: times per rank in order, how far each rank got (check_simulated reads it),
busy time and peak forwards held.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate, count
from operator import itemgetter, sub
from typing import NamedTuple

from app.core.schedules import stage_location, stages_per_copy, virtual_stage
from app.core.simulate.units import fit_pairs, run_units, skeleton


class Pass(NamedTuple):
    """What one simulator pass found, per rank: times in order, how far it got, its busy time
    (the sum of its actions' durations) and its peak of forwards held (F - B so far)."""

    starts: list[list[float]]
    ends: list[list[float]]
    ended: int  # distinct actions that ended: fewer than listed when one is listed twice
    pos: list[int]
    busy: list[float]
    peak: list[int]
    ops: list[list[tuple]] | None  # the compiled ops of run_units, which check_simulated reads


# A compiled action (schedules released by unit) is a tuple (key, dep1, hop1, dep2, hop2,
# duration, release): dep -1 when absent, -2 - key when produced on its own rank (done
# already: the order puts it earlier); hop = p2p time when produced elsewhere; release = the
# keys whose outputs its end sends. key = kind_base + mb * nvs + virtual stage.
_Op = tuple[int, int, float, int, float, float]
# One rank's template of each (kind, chunk): (key, dep1, hop1, dep2, hop2, duration, own1,
# own2) less the micro-batch's mb * nvs; dep None when absent; own: produced on this rank.
_Tmpl = tuple[int, int | None, float, int | None, float, float, bool, bool]


def _split(actions) -> bool:
    """Whether the backward is split (any W listed): B then lasts b alone, else b + w."""
    return any("W" in map(itemgetter(0), row) for row in actions)


def _templates(name, rank, ds, split, m, nvs) -> dict[str, list[_Tmpl]]:
    """Per kind, per chunk of one rank: what each of its actions waits for and lasts."""
    pp = nvs // len(ds)
    home = [stage_location(name, vs, pp)[0] for vs in range(nvs)]  # rank of each stage
    run = stages_per_copy(name, pp, len(ds))  # a micro-batch's stages (DualPipe: one copy)
    b_base, w_base = m * nvs, 2 * m * nvs  # F's base is 0
    out: dict[str, list[_Tmpl]] = {"F": [], "B": [], "W": []}
    for c, d in enumerate(ds):
        vs = virtual_stage(name, rank, c, pp)
        up = vs - 1 if vs % run else None
        down = vs + 1 if (vs + 1) % run else None
        # The hop into a chunk: p2p when its producer is elsewhere.
        up_hop = d.p2p if vs > 0 and home[vs - 1] != rank else 0.0
        down_hop = d.p2p if vs + 1 < nvs and home[vs + 1] != rank else 0.0
        f_own = up is not None and home[up] == rank
        b_own = down is not None and home[down] == rank
        out["F"].append((vs, up, up_hop, None, 0.0, d.of("F", split), f_own, False))
        out["B"].append((b_base + vs, vs, 0.0, None if down is None else b_base + down,
                         down_hop, d.of("B", split), True, b_own))  # fmt: skip
        out["W"].append((w_base + vs, b_base + vs, 0.0, None, 0.0, d.of("W", split), True, False))
    return out


class _Slots:
    """Chunk c's stand-in for its Durations in ``_templates``: its p2p and its F, B, W are
    the indices of their values in ``_slot_table`` (index 0 holds the 0.0 of a hop from the
    own rank), so what a pipeline shape alone decides is compiled once (``_skeleton``)."""

    __slots__ = ("_at", "p2p")

    def __init__(self, c: int, chunks: int) -> None:
        self.p2p, self._at = 1 + c, 1 + chunks + 3 * c

    def of(self, kind: str, split: bool) -> int:
        return self._at + "FBW".index(kind)


def _slot_table(ds, split: bool) -> list[float]:
    """One rank's values by ``_Slots`` index: 0.0, each chunk's p2p, each chunk's F, B, W."""
    return [0.0, *(d.p2p for d in ds), *(d.of(k, split) for d in ds for k in "FBW")]


def _skeleton(name, actions, m, nvs, plans=None) -> list[tuple[list[tuple], list]]:
    """Per rank: its compiled ops with slot indices for the hops and durations (each
    op (key, dep1, hop1, dep2, hop2, duration, release)), and its overlapped pairs: what
    the actions alone decide (who produced a dep never changes), with the later inputs
    an action waits for and its unit's release keys (simulate_units.skeleton)."""
    pp, split = len(actions), _split(actions)
    slots = [_Slots(c, nvs // pp) for c in range(nvs // pp)]
    out = []
    for rank, row in enumerate(actions):
        tmpl = _templates(name, rank, slots, split, m, nvs)
        ops = []
        for kind, mb, chunk in row:
            ko, d1, h1, d2, h2, dur, own1, own2 = tmpl[kind][chunk]
            at = mb * nvs
            dep1 = -1 if d1 is None else -2 - (at + d1) if own1 else at + d1
            dep2 = -1 if d2 is None else -2 - (at + d2) if own2 else at + d2
            ops.append((at + ko, dep1, int(h1), dep2, int(h2), dur))
        plan = None if plans is None else plans[rank]
        out.append(skeleton(name, row, ops, rank, pp, plan))
    return out


def _compile(name, actions, chunk_d, m, nvs, plans=None, cache=None) -> list[list[_Op]]:
    """Actions -> integer keys and static dependencies, for the schedules released by unit
    (simulate_units.run_units): the shape's ``_skeleton`` (once per shape in ``cache``,
    a caller's dict whose actions for one (name, pp, m, nvs) are always the same) filled
    with these durations; ``plans``: each rank's schedules.units.unit_plan, where the
    caller has them already."""
    key = ("unit_skeleton", name, len(actions), m, nvs)
    if cache is None:
        skeletons = _skeleton(name, actions, m, nvs, plans)
    else:
        if key not in cache:
            cache[key] = _skeleton(name, actions, m, nvs, plans)
        skeletons = cache[key]
    split = _split(actions)
    out = []
    for row, ds, (ops, pairs) in zip(actions, chunk_d, skeletons, strict=True):
        v = _slot_table(ds, split)
        filled = [(k, d1, v[h1], d2, v[h2], v[d], rel) for k, d1, h1, d2, h2, d, rel in ops]
        out.append(fit_pairs(filled, row, pairs, ds))
    return out


def unit_pass(name, actions, chunk_d, m, nvs, plans=None, cache=None) -> Pass:
    """The pass for schedules released by unit (simulate_units.run_units)."""
    ops = _compile(name, actions, chunk_d, m, nvs, plans, cache)
    start, end, pos = run_units(ops, 3 * m * nvs)
    starts, ends = _by_rank(ops, start, end)
    busy = [sum(map(itemgetter(5), row), 0.0) for row in ops]
    peak = [_peak_held_forwards("".join(map(itemgetter(0), row))) for row in actions]
    return Pass(starts, ends, len(end) - end.count(-1.0), pos, busy, peak, ops)


def _by_rank(ops: list[list[tuple]], start, end) -> tuple[list[list[float]], list[list[float]]]:
    """Each rank's start and end times in its order, from times by key."""
    keys = [list(map(itemgetter(0), row)) for row in ops]
    starts = [list(map(start.__getitem__, k)) for k in keys]
    return starts, [list(map(end.__getitem__, k)) for k in keys]


def _fast_templates(name, rank, ds, split, m, nvs) -> dict[str, list[tuple]]:
    """``_templates`` for ``plain_pass``'s key space: (key, input, hop, duration, held) with keys
    base + mb * (nvs + 1) + vs + 1, one input per action, and held the change in forwards
    held (F +1, B -1). Column 0 of each block is always ready (the first stage's forward reads
    it). B reads the next stage's B, and only the last stage's B reads its own F: every input
    read implies the ones dropped, since B(vs + 1) ended after F(vs + 1), which read F(vs)
    (its own rank's, so earlier in this order and ended before this rank is free)."""
    block, col = m * nvs, nvs + 1
    held = {"F": 1, "B": -1, "W": 0}

    def widen(key: int | None) -> int:  # kind block * m * col + vs + 1; None: column 0
        return 0 if key is None else (key // block) * m * col + key % block + 1

    return {
        kind: [
            (widen(key), widen(d1 if d2 is None else d2), h1 if d2 is None else h2, dur, held[kind])
            for key, d1, h1, d2, h2, dur, _, _ in rows
        ]
        for kind, rows in _templates(name, rank, ds, split, m, nvs).items()
    }


def plain_pass(name, actions, chunk_d, m, nvs, plans=None, cache=None) -> Pass:
    """Earliest start of every action given per-rank order: one pass, each rank a generator
    that pauses where its input has not ended and resumes once it has (a paused frame keeps
    its place, which costs less than re-entering a loop: 60,000 pauses at p=64, m=512, v=4).
    ``plans``, ``cache``: unit_pass's, unused here (nothing is released by unit)."""
    split = _split(actions)
    col, pp = nvs + 1, len(actions)
    end = [-1.0] * (3 * m * col)
    end[::col] = [0.0] * (3 * m)  # the always-ready column
    starts, ends = [[] for _ in actions], [[] for _ in actions]
    busy, peak = [0.0] * pp, [0] * pp
    # key -> the rank paused on it. One at most: an output's consumers are the next stage
    # and its own rank, which lists the producer first (or never finishes: check_simulated).
    waiting: dict[int, int] = {}
    ready = list(range(pp - 1, -1, -1))
    resume = [
        _rank_pass(row, _fast_templates(name, r, chunk_d[r], split, m, nvs), col, r,
                   (end, waiting, ready), (starts[r], ends[r], busy, peak)).__next__
        for r, row in enumerate(actions)
    ]  # fmt: skip
    while ready:
        resume[ready.pop()]()
    ended = len(end) - end.count(-1.0) - 3 * m
    return Pass(starts, ends, ended, [len(st) for st in starts], busy, peak, None)


def _rank_pass(row, tmpl, col, rank, shared, out) -> Iterator[None]:
    """One rank's actions in order; yields where its input has not ended yet. This loop is
    the simulator's cost, so it is kept flat: about 0.5 us per action, pauses included."""
    end, waiting, ready = shared
    put_start, put_end = out[0].append, out[1].append
    t, busy, held, peak = 0.0, 0.0, 0, 0
    for kind, mb, chunk in row:
        key, dep, hop, duration, more = tmpl[kind][chunk]
        at = mb * col
        e = end[at + dep]
        if e < 0:
            waiting[at + dep] = rank
            yield
            e = end[at + dep]
        if e + hop > t:
            t = e + hop
        put_start(t)
        t += duration
        key += at
        end[key] = t
        put_end(t)
        if key in waiting:
            ready.append(waiting.pop(key))
        busy += duration
        held += more
        if held > peak:
            peak = held
    out[2][rank], out[3][rank] = busy, peak
    while True:  # finished: never resumed, since no other rank waits on it
        yield


def _peak_held_forwards(kinds: str) -> int:
    """Peak of (forwards - backwards so far) over one rank's kinds, e.g. "FFBFBB" -> 2. It
    peaks just before a B or at the end, so it is the peak of forwards counted before the
    j-th B, minus j (string ops rather than a loop: a rank can list thousands)."""
    runs = accumulate(map(len, kinds.replace("W", "").split("B")))
    return max(map(sub, runs, count()))
