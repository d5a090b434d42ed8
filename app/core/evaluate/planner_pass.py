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
- what depends on fewer knobs than a candidate (the held model, the layout, the split, the
  in-flight closed forms, parameters, durations, the tail) is computed once per key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.cost import durations, memory, shapes, step
from app.core.evaluate.planner_forms import frontier, makespan, peak_inflight
from app.core.evaluate.planner_search import GIB, Candidate
from app.core.inputs.presets import HardwareSpec, ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout


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
        t = c.training(self.batch)
        # As cost.predict.price holds it: the vocabulary padded for this tp.
        m = self._cached(("held", c.tp, t.vocab_multiple), lambda: (
            shapes.as_held(self.m, c.tp, t.vocab_multiple)))  # fmt: skip
        split = self._cached(("split", c.pp, c.v), lambda: shapes.even_chunk_layers(m, c.pp, c.v))
        return t, m, t.microbatches, split

    def _params(self, c: Candidate, m: ModelSpec, split: list[list[int]]) -> list[int]:
        return self._cached(("params", c.pp, c.tp, c.v), lambda: memory.rank_params(
            m, c.pp, c.tp, c.v, c.pp - 1, split))  # fmt: skip

    def peak(self, c: Candidate) -> float:
        """estimate's peak_bytes: the largest stage total of memory.stage_memory."""
        t, m, micro, split = self._parts(c)
        shape = (c.schedule, c.pp, c.v, micro)
        held = self._cached(("frontier", *shape), lambda: frontier(c, micro, split))
        inflight = self._cached(("inflight", *shape), lambda: peak_inflight(c, micro))
        params = self._params(c, m, split)
        rows = self._rows(c, t, m, split, params, held, inflight)
        pick = lambda xs: None if xs is None else [xs[i] for i in rows]  # noqa: E731
        stages = memory.stage_memory(
            m, t, (c.dp, c.tp, len(rows)), c.v, len(rows) - 1, pick(inflight), pick(split),
            frontier=pick(held), params=pick(params), hw=self.hw,
        )  # fmt: skip
        return max(s.total_bytes for s in stages)

    def _rows(
        self, c: Candidate, t: Training, m: ModelSpec, split: list[list[int]],
        params: list[int], held: list | None, inflight: list[int],
    ) -> list[int]:  # fmt: skip
        """The stages whose totals can be the peak: the first, the last (the head's), and of
        the middle stages with the same parameters and layers the one keeping the most
        activations (memory.stage_memory: kept = inflight x its largest chunk, or the
        frontier's peak at w_pass_share; a middle stage holds no root unit, so its total
        rises with kept)."""
        if c.pp <= 2:
            return list(range(c.pp))
        if held is not None:
            share = self._cached(("w_share", c.tp, c.mbs, c.recompute, c.sp), lambda: (
                memory.w_pass_share(m, t, c.tp)))  # fmt: skip
            kept = [max(f + share * w for f, w in row) for row in held]
        else:
            kept = inflight
        best: dict[tuple, int] = {}
        for s in range(1, c.pp - 1):
            key = (params[s], tuple(split[s]))
            if key not in best or kept[s] > kept[best[key]]:
                best[key] = s
        return [0, *sorted(best.values()), c.pp - 1]

    def tokens_per_s(self, c: Candidate) -> float:
        """estimate's tokens_per_s: the closed-form makespan plus the tail."""
        t, m, micro, split = self._parts(c)
        hw = self.hw
        layout = self._cached(("layout", c.dp, c.tp, c.pp), lambda: Layout(
            dp=c.dp, tp=c.tp, pp=c.pp, gpus_per_node=hw.gpus_per_node))  # fmt: skip
        # Durations read the ZeRO stage only for ZeRO-3's gathers (durations._gather_s) and
        # never the schedule or the micro-batch count (as in planner_search.estimate).
        mesh = (c.dp, c.tp, c.pp, c.v, c.mbs, c.recompute, c.sp, c.tp_overlap)
        stage_d, _ = self._cached(("d", *mesh, c.zero >= 3, c.param_overlap), lambda: (
            durations.stage_durations(m, hw, t, layout, c.v, c.pp - 1)))  # fmt: skip
        slowest = self._cached(("slowest", *mesh, c.zero >= 3, c.param_overlap), lambda: (
            max(stage_d, key=lambda d: d.f + d.b + d.w)))  # fmt: skip
        rank_params = max(self._params(c, m, split))
        end = self._cached(("tail", *mesh, c.zero, c.grad_overlap, c.param_overlap), lambda: (
            step.tail(rank_params, t, layout, hw, stage_d, c.v)))  # fmt: skip
        step_s = makespan(c, micro, slowest) + end.dp_s + end.optim_s
        return self.batch * m.seq_len / step_s
