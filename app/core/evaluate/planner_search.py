"""The planner's search space and its closed-form pass: every valid candidate for a model,
a GPU count and a global batch, and the quick estimate each is ranked by before the best
are simulated (planner.plan). The estimate computes what does not depend on the schedule
once per mesh (``memo``), since one plan scores thousands of candidates."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product
from typing import Any

from app.core.cost import durations, expert_tail, memory, shapes, step
from app.core.evaluate.planner_forms import frontier, makespan, peak_inflight
from app.core.inputs.presets import HardwareSpec, ModelSpec
from app.core.inputs.specs import tp_splits
from app.core.inputs.training import Training
from app.core.layout.topology import Layout, parse_order

SCHEDULES = (
    ("1f1b", 1), ("zb-h1", 1), ("zb-h2", 1), ("interleaved", 2), ("interleaved", 4),
    ("looped-bfs", 2), ("gpipe", 1),
)  # fmt: skip
MICRO_BATCH_SIZES = (1, 2, 4, 8)
RECOMPUTE = ("selective", "full")
GIB = 1 << 30
# Pipelines with more chunk-microbatch slots than this (pp * m * v) are not searched: their
# exact simulation would take seconds each (docs: the planner section of README.md).
MAX_PLAN_SLOTS = 16_384
# The Scenario's own bound on microbatches (inputs/scenario.py): a row past it could not be
# opened as a scenario, and was answered as a 422 naming a field the planner has not got.
MAX_MICROBATCHES = 4096
# Rank orders (layout/topology.py ORDER_PRESETS): 3D candidates keep the Scenario's default.
ORDER_3D, ORDER_5D = "tp-pp-dp", "megatron-5d"
# Candidate's knobs by the Scenario fields they set.
KNOB_FIELDS = (
    "sequence_parallel", "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
)  # fmt: skip


@dataclass(frozen=True)
class Candidate:
    dp: int
    tp: int
    pp: int
    schedule: str
    v: int
    mbs: int
    zero: int
    recompute: str
    # The overlaps and sequence parallelism a framework runs this mesh with (``knobs``).
    sp: bool = False
    tp_overlap: bool = False
    grad_overlap: bool = False
    param_overlap: bool = False
    # Context- and expert-parallel sizes (planner_axes searches them): cp splits every
    # sequence, ep the experts, folded over dp x cp as Megatron's expert grid.
    cp: int = 1
    ep: int = 1
    # The FP8 recipe the candidate runs (cost/fp8.py): the plan's fp8 parameter names one
    # for every candidate, or with fp8=search the planner tries the hardware's (planner_fp8).
    fp8: str = "none"
    # HSDP (zero = 3): the data-parallel ranks of each FSDP shard group; None: all of dp,
    # plain FSDP (planner_hsdp searches the others).
    dp_shard: int | None = None

    @property
    def knobs(self) -> tuple[str, ...]:
        """The knobs on, by their Scenario field names."""
        on = (self.sp, self.tp_overlap, self.grad_overlap, self.param_overlap)
        return tuple(k for k, x in zip(KNOB_FIELDS, on, strict=True) if x)

    def microbatches(self, global_batch: int) -> int:
        return global_batch // (self.dp * self.mbs)

    def training(self, global_batch: int) -> Training:
        return Training(
            self.mbs, self.microbatches(global_batch), "bf16", self.zero, self.recompute,
            sequence_parallel=self.sp, tp_comm_overlap=self.tp_overlap,
            overlap_grad_reduce=self.grad_overlap, overlap_param_gather=self.param_overlap,
            cp=self.cp, fp8=self.fp8, dp_shard=self.dp_shard,  # type: ignore[arg-type]
        )  # fmt: skip

    @property
    def order(self) -> str:
        """The rank order: the article's tp-pp-dp in 3D; with cp or ep, Megatron's
        tp-cp-ep-dp-pp, whose pp-last grid the expert groups fold over (layout/mesh.py)."""
        return ORDER_3D if self.cp == self.ep == 1 else ORDER_5D

    def layout(self, gpus_per_node: int) -> Layout:
        return Layout(
            dp=self.dp, tp=self.tp, pp=self.pp, order=parse_order(self.order),
            gpus_per_node=gpus_per_node, cp=self.cp, ep=self.ep,
        )  # fmt: skip


def knobs(m: ModelSpec, tp: int, dp: int, zero: int) -> dict[str, bool]:
    """Sequence parallelism and the overlaps, each on wherever a framework runs it: the cost
    model never makes one slower or heavier (tests/core/test_planner_knobs.py checks that
    over a grid), so searching "off" too would only double the pool. Were one ever to lose,
    it would have to become a searched axis.

    SP: Megatron-LM and NeMo recipes turn --sequence-parallel on with TP > 1 (Korthikanti
    et al. 2022 §4.2.2); Megatron needs seq_len divisible by tp (specs.check_model).
    TP comm overlap (Megatron --tp-comm-overlap, only with SP: arguments.py) stays off: no
    published measured run validates the model's gain from it, and with it Meta's 405B layout
    (TP8 PP16 DP128, measured about 40% MFU: Dubey et al. 2024 Table 4) is predicted at 53%.
    A page's scenario can still turn it on; the planner does not rank on an unvalidated gain.
    Grad-reduce overlap: Megatron --overlap-grad-reduce, PyTorch DDP/FSDP buckets (Li et al.
    2020 §3.2.3), with DP > 1. Param-gather overlap: FSDP's prefetch of ZeRO-3 gathers
    (Zhao et al. 2023 §3.3), the only gathers the model prices (durations.exposed_gather_s).
    """
    sp = tp > 1 and m.seq_len % tp == 0
    zero3 = zero == 3 and dp > 1
    return {"sp": sp, "tp_overlap": False, "grad_overlap": dp > 1, "param_overlap": zero3}


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def tp_sizes(m: ModelSpec, hw: HardwareSpec, gpus: int) -> list[int]:
    """TP sizes inside one node that split the model (and each expert: specs.check_moe)."""
    return [
        tp for tp in _divisors(min(gpus, hw.gpus_per_node))
        if tp_splits(m, tp) and not gpus % tp and not (m.experts and m.moe_width % tp)
    ]  # fmt: skip


def candidates(m: ModelSpec, hw: HardwareSpec, gpus: int, batch: int) -> list[Candidate]:
    """The article's placement: TP stays inside a node, PP and DP take the rest (cp = ep = 1;
    planner_axes.pool adds the other sizes)."""
    out = []
    for tp in tp_sizes(m, hw, gpus):
        for pp in _divisors(gpus // tp):
            dp = gpus // (tp * pp)
            if pp > m.layers or batch % dp:
                continue
            out += mesh_candidates(m, batch, dp, tp, pp)
    return out


def mesh_candidates(
    m: ModelSpec, batch: int, dp: int, tp: int, pp: int, cp: int = 1, ep: int = 1
) -> list[Candidate]:
    """Every runnable schedule, micro-batch size, ZeRO stage and recompute on one mesh."""
    out = []
    for (name, v), mbs, zero, rc in product(SCHEDULES, MICRO_BATCH_SIZES, (0, 1, 2, 3), RECOMPUTE):
        on = knobs(m, tp, dp, zero)
        c = Candidate(dp, tp, pp, name, v, mbs, zero, rc, **on, cp=cp, ep=ep)
        if _runnable(c, m, batch):
            out.append(c)
    return out


def _runnable(c: Candidate, m: ModelSpec, batch: int) -> bool:
    if (batch // c.dp) % c.mbs or (c.zero and c.dp == 1):
        return False
    micro = c.microbatches(batch)
    if micro > MAX_MICROBATCHES or c.pp * micro * c.v > MAX_PLAN_SLOTS:
        return False
    if c.schedule in ("interleaved", "looped-bfs"):
        # Any layer count splits (shapes.default_split) while each virtual stage gets one.
        return c.pp > 1 and micro % c.pp == 0 and m.layers >= c.pp * c.v
    if c.schedule == "zb-h2":  # fewer micro-batches cannot fill its warm-up: no closed form
        return c.pp > 1 and micro >= 2 * c.pp - 1
    return not (c.pp == 1 and c.schedule != "1f1b")  # one stage: every schedule is the same


def _cached(memo: dict, key: tuple, make: Callable[[], Any]) -> Any:
    if key not in memo:
        memo[key] = make()
    return memo[key]


def estimate(
    c: Candidate, m: ModelSpec, hw: HardwareSpec, batch: int, memo: dict | None = None
) -> dict[str, Any]:
    """The closed-form pass's numbers for one candidate. ``memo``: one plan's cache of the
    parts that do not depend on the schedule (and, below ZeRO-3, on the ZeRO stage), shared
    by the thousands of candidates one plan scores."""
    memo = {} if memo is None else memo
    t = c.training(batch)
    m = shapes.as_held(m, c.tp, t.vocab_multiple, c.ep)  # as cost.predict.price holds it
    layout = c.layout(hw.gpus_per_node)
    micro, head = t.microbatches, c.pp - 1
    # Mean chunk per rank. Durations read the ZeRO stage only for ZeRO-3's gathers
    # (durations._gather_s) and never the schedule or the micro-batch count.
    mesh = (c.dp, c.tp, c.pp, c.v, c.mbs, c.recompute, c.sp, c.tp_overlap, c.cp, c.ep, c.fp8,
            c.dp_shard)  # fmt: skip
    stage_d, _ = _cached(memo, ("d", *mesh, c.zero >= 3, c.param_overlap), lambda: (
        durations.stage_durations(m, hw, t, layout, c.v, head)))  # fmt: skip
    slowest = max(stage_d, key=lambda d: d.f + d.b + d.w)
    split = _cached(memo, ("split", c.pp, c.v), lambda: shapes.even_chunk_layers(m, c.pp, c.v))
    # A schedule's in-flight closed forms read only its shape: the same for every ZeRO stage,
    # recompute and micro-batch size that give this many micro-batches.
    shape = (c.schedule, c.pp, c.v, micro)
    held = _cached(memo, ("held", *shape), lambda: frontier(c, micro, split))
    inflight = _cached(memo, ("inflight", *shape), lambda: peak_inflight(c, micro))
    par = (c.dp, c.tp, c.pp)
    params = _cached(memo, ("params", c.pp, c.tp, c.v, c.ep), lambda: memory.rank_params(
        m, c.pp, c.tp, c.v, head, split))  # fmt: skip
    # hw: the per-process floor and the allocator's share count, as on the scenario's page.
    stages = memory.stage_memory(
        m, t, par, c.v, head, inflight, split, frontier=held, params=params, hw=hw
    )
    rank_params = max(params)
    end = _cached(memo, ("tail", *mesh, c.zero, c.grad_overlap, c.param_overlap), lambda: (
        step.tail(rank_params, t, layout, hw, stage_d, c.v,
                  experts=expert_tail.share(m, layout, params, split))))  # fmt: skip
    step_s = makespan(c, micro, slowest) + end.dp_s + end.optim_s
    peak = max(s.total_bytes for s in stages)
    return {"tokens_per_s": batch * m.seq_len / step_s, "peak_bytes": peak,
            "fits": peak <= hw.hbm_gib * GIB}  # fmt: skip
