"""The planner's closed-form pass, per request: planner_search.estimate's numbers for every
candidate, computed once per request object (``Pass``) that owns the caches, so that 1,024
GPUs x 175B (3,000 candidates) stays well under a second (bench/bench_plan.py).

Three savings, none of which changes a number (tests/core/test_planner_pass.py checks every
candidate against estimate, and test_planner_golden.py whole plans against the code before):
- the time side is priced only for candidates that fit: a misfit is ranked by memory alone;
- memory.stage_memory prices each stage from that stage's row alone, and a middle stage
  (neither the embedding's nor the head's) grows with what it keeps in flight, so only the
  first stage, the head stage and, per distinct (parameters, layers) row among the others,
  the one keeping the most are priced: the peak is the largest of those;
- the candidates sharing a Training and (dp, tp), all schedules and pipeline depths, are
  priced in one stage_memory call, each stage a row that says which ends it holds and
  what it keeps (the split-backward frontier's peak worked out here, as stage_memory does);
- what depends on fewer knobs than a candidate (the held model, the layout, the split, the
  in-flight closed forms, parameters, the rows picked, durations, the tail) is computed
  once per key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.cost import durations, expert_tail, memory, shapes, step
from app.core.evaluate.planner_forms import frontier, makespan, peak_inflight
from app.core.evaluate.planner_search import GIB, Candidate
from app.core.inputs.presets import HardwareSpec, ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.simulate import Durations


class Pass:
    """One plan's closed-form pass over (model, hardware, global batch)."""

    def __init__(self, m: ModelSpec, hw: HardwareSpec, batch: int) -> None:
        self.m, self.hw, self.batch = m, hw, batch
        self.capacity = hw.hbm_gib * GIB
        self._memo: dict[tuple, Any] = {}

    def _cached(self, key: tuple, make: Callable[[], Any]) -> Any:
        memo = self._memo
        if key not in memo:
            memo[key] = make()
        return memo[key]

    def _parts(self, c: Candidate) -> tuple[Training, ModelSpec, int, list[list[int]]]:
        # The schedule, v and pp are no Training fields: one per such group of candidates.
        t = self._cached(("training", *_training_key(c)), lambda: c.training(self.batch))
        # As cost.predict.price holds it: the vocabulary padded for this tp, experts/ep.
        m = self._cached(("held", c.tp, t.vocab_multiple, c.ep), lambda: (
            shapes.as_held(self.m, c.tp, t.vocab_multiple, c.ep)))  # fmt: skip
        split = self._cached(("split", c.pp, c.v), lambda: shapes.even_chunk_layers(m, c.pp, c.v))
        return t, m, t.microbatches, split

    def _params(self, c: Candidate, m: ModelSpec, split: list[list[int]]) -> list[int]:
        return self._cached(("params", c.pp, c.tp, c.v, c.ep), lambda: memory.rank_params(
            m, c.pp, c.tp, c.v, c.pp - 1, split))  # fmt: skip

    def peaks(self, pool: list[Candidate]) -> list[float]:
        """peak() of every candidate, priced with one memory.stage_memory call per group of
        candidates sharing a Training and a mesh width (dp, tp), all schedules and depths
        together: a stage's row says which ends it holds (``ends``) and what it keeps
        (``held``), so the call's per-call work (rates, floor) is paid once per group."""
        groups: dict[tuple, list[int]] = {}
        for i, c in enumerate(pool):
            groups.setdefault((c.tp, c.ep, *_training_key(c)), []).append(i)
        out = [0.0] * len(pool)
        for members in groups.values():
            self._price(pool, members, out)
        return out

    def _price(self, pool: list[Candidate], members: list[int], out: list[float]) -> None:
        c = pool[members[0]]
        t, m, _, _ = self._parts(c)
        rows: tuple[list, list, list, list] = ([], [], [], [])  # layers, params, kept, ends
        spans, memo, batch = [], self._memo, self.batch
        for i in members:
            c = pool[i]
            # A candidate's rows read its shape, the parameters' (pp, tp, v) and the W
            # share's knobs (the rest of the group's Training is the same).
            micro = batch // (c.dp * c.mbs)
            key = ("rows", c.schedule, c.pp, c.v, micro, c.tp, c.mbs, c.recompute, c.sp, c.cp,
                   c.ep)  # fmt: skip
            block = memo.get(key)
            if block is None:
                block = memo[key] = self._block(c)
            spans.append((i, len(rows[0]), len(block[0])))
            for into, part in zip(rows, block, strict=True):
                into.extend(part)
        n = len(rows[0])
        stages = memory.stage_memory(
            m, t, (c.dp, c.tp, n), 1, n - 1, [0] * n, rows[0], rows[2], rows[3], None,
            rows[1], hw=self.hw,
        )  # fmt: skip
        for i, start, count in spans:
            out[i] = max(s.total_bytes for s in stages[start : start + count])

    def _block(self, c: Candidate) -> tuple[list, list, list, list]:
        """The rows (layers, parameters, what is kept, ends held) of the stages of ``c``
        that can hold its peak."""
        t, m, micro, split = self._parts(c)
        shape = (c.schedule, c.pp, c.v, micro)
        held = self._cached(("frontier", *shape), lambda: frontier(c, micro, split))
        params = self._params(c, m, split)
        # What each stage keeps, as memory.stage_memory reckons it: the split-backward
        # frontier's peak at w_pass_share, else in-flight micro-batches x its largest chunk.
        if held is not None:
            share = self._cached(("w_share", c.tp, c.mbs, c.recompute, c.sp, c.cp, c.ep), lambda: (
                memory.w_pass_share(m, t, c.tp)))  # fmt: skip
            kept = [max(f + share * w for f, w in row) for row in held]
        else:
            inflight = peak_inflight(c, micro)
            kept = [inflight[s] * max(split[s]) for s in range(c.pp)]
        chosen = _rows(c.pp, split, params, kept)
        return (
            [split[s] for s in chosen],
            [params[s] for s in chosen],
            [kept[s] for s in chosen],
            [[(s == 0, s == c.pp - 1)] for s in chosen],
        )

    def peak(self, c: Candidate) -> float:
        """estimate's peak_bytes: the largest stage total of memory.stage_memory."""
        out = [0.0]
        self._price([c], [0], out)
        return out[0]

    def _stage_durations(
        self, m: ModelSpec, t: Training, layout: Layout, chunks: int, head: int
    ) -> list[Durations]:
        """durations.stage_durations' per-rank means, each distinct row of chunk durations
        averaged once: a deep pipeline's middle ranks share one row."""
        per_chunk, _ = durations.chunk_durations(m, self.hw, t, layout, chunks, head)
        means: dict[tuple, Durations] = {}
        out = []
        for row in per_chunk:
            key = tuple(row)
            if key not in means:
                means[key] = Durations.mean(row)
            out.append(means[key])
        return out

    def tokens_per_s(self, c: Candidate) -> float:
        """estimate's tokens_per_s: the closed-form makespan plus the tail."""
        t, m, micro, split = self._parts(c)
        hw = self.hw
        layout = self._cached(("layout", c.dp, c.tp, c.pp, c.cp, c.ep), lambda: (
            c.layout(hw.gpus_per_node)))  # fmt: skip
        # Durations read the ZeRO stage only for ZeRO-3's gathers (durations._gather_s) and
        # never the schedule or the micro-batch count (as in planner_search.estimate).
        mesh = (c.dp, c.tp, c.pp, c.v, c.mbs, c.recompute, c.sp, c.tp_overlap, c.cp, c.ep, c.fp8,
                c.dp_shard)  # fmt: skip
        stage_d = self._cached(("d", *mesh, c.zero >= 3, c.param_overlap), lambda: (
            self._stage_durations(m, t, layout, c.v, c.pp - 1)))  # fmt: skip
        slowest = self._cached(("slowest", *mesh, c.zero >= 3, c.param_overlap), lambda: (
            max(stage_d, key=lambda d: d.f + d.b + d.w)))  # fmt: skip
        params = self._params(c, m, split)
        end = self._cached(("tail", *mesh, c.zero, c.grad_overlap, c.param_overlap), lambda: (
            step.tail(max(params), t, layout, hw, stage_d, c.v,
                      experts=expert_tail.share(m, layout, params, split))))  # fmt: skip
        step_s = makespan(c, micro, slowest) + end.dp_s + end.optim_s
        return self.batch * m.seq_len / step_s


def _training_key(c: Candidate) -> tuple:
    """What of a candidate its Training reads (Candidate.training)."""
    return (c.dp, c.mbs, c.zero, c.recompute, c.sp, c.tp_overlap, c.grad_overlap,
            c.param_overlap, c.cp, c.fp8, c.dp_shard)  # fmt: skip


def _rows(pp: int, split: list[list[int]], params: list[int], kept: list) -> list[int]:
    """The stages whose totals can be the peak: the first, the last (the head's), and of the
    middle stages with the same parameters and layers the one keeping the most (in
    memory.stage_memory a middle stage holds no root unit, so its total rises with kept)."""
    if pp <= 2:
        return list(range(pp))
    best: dict[tuple, int] = {}
    for s in range(1, pp - 1):
        key = (params[s], tuple(split[s]))
        if key not in best or kept[s] > kept[best[key]]:
            best[key] = s
    return [0, *sorted(best.values()), pp - 1]
