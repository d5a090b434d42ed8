"""Configuration planner: every valid (dp, tp, pp, schedule, v, micro-batch, zero, recompute)
for a model, a GPU count and a global batch, ranked by predicted tokens/s among those that fit.

Two passes keep 1,024 GPUs x 175B under a second: a closed-form pass over every
candidate (the bubble formulas tests/core/test_simulate.py proves the simulator obeys), then
the full simulation for the best few, which are re-ranked by their simulated numbers. The
first pass computes what does not depend on the schedule once per mesh (estimate's memo).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import product
from typing import Any

from app.core import schedules
from app.core.cost import durations, memory, shapes, step
from app.core.evaluate.one_scenario import Registry, prepare
from app.core.evaluate.planner_why import framework_notes as framework_notes  # re-exported
from app.core.evaluate.planner_why import reason_text, why_of
from app.core.inputs.presets import HARDWARE, MODELS, HardwareSpec, ModelSpec
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from app.core.schedules import ScheduleName
from app.core.simulate import Durations

SCHEDULES = (
    ("1f1b", 1), ("zb-h1", 1), ("zb-h2", 1), ("interleaved", 2), ("interleaved", 4),
    ("looped-bfs", 2), ("gpipe", 1),
)  # fmt: skip
# Schedules with no closed form to rank by are simulated beside their closest relative
# whenever it makes the shortlist: interleaved-zb is interleaved with W split off and
# scheduled into the bubbles; DualPipe(V) run 1F1B's micro-batches in both directions.
SIBLINGS = {"interleaved": ("interleaved-zb",), "1f1b": ("dualpipev", "dualpipe")}
SIBLING_NAMES = frozenset(n for names in SIBLINGS.values() for n in names)
# Split-backward schedules as 1F1B plus more warm-up and W lag (schedules_zb.deferred_w):
# rank i's (warm-up, lag) = k * (p-1-i, i). Qi et al. 2024 §3.1: ZB-H1 k = 1, ZB-H2 k = 2.
DEFERRED_W = {"zb-h1": 1, "zb-h2": 2}
MICRO_BATCH_SIZES = (1, 2, 4, 8)
RECOMPUTE = ("selective", "full")
GIB = 1 << 30
# Pipelines with more chunk-microbatch slots than this (pp * m * v) are not searched: their
# exact simulation would take seconds each (docs: the planner section of README.md).
MAX_PLAN_SLOTS = 16_384


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

    def microbatches(self, global_batch: int) -> int:
        return global_batch // (self.dp * self.mbs)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(m: ModelSpec, hw: HardwareSpec, gpus: int, batch: int) -> list[Candidate]:
    """The article's placement: TP stays inside a node, PP and DP take the rest."""
    out = []
    for tp in _divisors(min(gpus, hw.gpus_per_node)):
        if m.heads % tp or m.ffn_hidden % tp or gpus % tp:
            continue
        for pp in _divisors(gpus // tp):
            dp = gpus // (tp * pp)
            if pp > m.layers or batch % dp:
                continue
            for (name, v), mbs, zero, rc in product(
                SCHEDULES, MICRO_BATCH_SIZES, (0, 1, 2, 3), RECOMPUTE
            ):
                c = Candidate(dp, tp, pp, name, v, mbs, zero, rc)
                if _runnable(c, m, batch):
                    out.append(c)
    return out


def _runnable(c: Candidate, m: ModelSpec, batch: int) -> bool:
    if (batch // c.dp) % c.mbs or (c.zero and c.dp == 1):
        return False
    micro = c.microbatches(batch)
    if c.pp * micro * c.v > MAX_PLAN_SLOTS:
        return False
    if c.schedule in ("interleaved", "looped-bfs"):
        # Any layer count splits (shapes.default_split) while each virtual stage gets one.
        return c.pp > 1 and micro % c.pp == 0 and m.layers >= c.pp * c.v
    if c.schedule == "zb-h2":  # fewer micro-batches cannot fill its warm-up: no closed form
        return c.pp > 1 and micro >= 2 * c.pp - 1
    return not (c.pp == 1 and c.schedule != "1f1b")  # one stage: every schedule is the same


def _peak_inflight(c: Candidate, micro: int) -> list[int]:
    """Closed forms the simulator's tests check: 1F1B min(p-i, m), GPipe m, interleaved
    torch's warm-up (v-1)p + 2(p-1-i) + 1 capped at m*v."""
    p = c.pp
    if c.schedule in ("gpipe", "looped-bfs"):  # every forward held until the backwards
        return [micro * c.v] * p
    if c.schedule == "interleaved":
        return [min((c.v - 1) * p + 2 * (p - 1 - i) + 1, micro * c.v) for i in range(p)]
    if c.schedule == "zb-h2":  # Qi et al. 2024 §3.1: 2p-1 on stage 0, two fewer per stage
        return [min(2 * (p - 1 - i) + 1, micro) for i in range(p)]
    return [min(p - i, micro) for i in range(p)]


def _frontier(
    c: Candidate, micro: int, layers: list[list[int]]
) -> list[list[tuple[int, int]]] | None:
    """memory.held_frontier's (F-to-B, B-to-W) peaks of a split-backward schedule, in closed
    form (tests/core/test_schedules_zb.py checks it against the simulated orders)."""
    if c.schedule not in DEFERRED_W:
        return None
    k = DEFERRED_W[c.schedule]
    return [
        [(f * n, w * n) for f, w in _held_points(k * (c.pp - 1 - i), k * i, micro)]
        for i, (n,) in enumerate(layers)
    ]


def _held_points(warmup: int, lag: int, m: int) -> list[tuple[int, int]]:
    """Where deferred_w(warmup, lag) can peak: after the warm-up, the last steady F and its B
    (at most ``lag`` W's waiting), and in the drain the first B, the B that reaches lag + 1
    waiting W's, and the last B."""
    w = min(warmup, m)
    points = [(w, 0)]
    if m > w:
        j = min(m - w - 1, lag)
        points += [(w + 1, j), (w, j + 1)]
    for k in {1, min(max(1, lag + 1 - (m - w)), w), w}:
        if 1 <= k <= w:
            points.append((w - k, min(m - w + k, lag + 1)))
    return points


def _makespan(c: Candidate, micro: int, d: Durations) -> float:
    p, f, b, w = c.pp, d.f, d.b, d.w
    hops = 2 * (p - 1) * d.p2p
    if c.schedule == "zb-h1":  # Qi et al. 2024 §3.1: m(F+B+W) + (p-1)(F+B-W)
        return micro * (f + b + w) + (p - 1) * (f + b - w) + hops
    if c.schedule == "zb-h2":
        # Qi et al. 2024 §3.1: stage 0 idles (p-1)(F+B-2W) once running, or (p-1)(B-F) for
        # its first B when B > F; the last stage starts (p-1)F late. The largest of the
        # three, exact at m >= 2p-1 (tests/core/test_schedules_zb.py).
        return micro * (f + b + w) + (p - 1) * max(f, f + b - 2 * w, b - f) + hops
    if c.schedule == "looped-bfs":
        # Derived (Lamy-Poirier 2023, arXiv 2211.05953 §3): GPipe's (m + p - 1)(F + B), and
        # each further loop of a chunk waits for its first input to come round the ring,
        # max(m*F, p*(F + p2p)) forward and likewise backward (test_planner_siblings.py).
        fwd, bwd = max(micro * f, p * (f + d.p2p)), max(micro * (b + w), p * (b + w + d.p2p))
        return (c.v - 1) * (fwd + bwd) + (micro + p - 1) * (f + b + w) + hops
    # Narayanan et al. 2021 §2.2: (m*v + p - 1) chunk slots of F + B (B including W).
    return (micro * c.v + p - 1) * (f + b + w) + hops


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
    t = Training(c.mbs, c.microbatches(batch), "bf16", c.zero, c.recompute)
    layout = Layout(dp=c.dp, tp=c.tp, pp=c.pp, gpus_per_node=hw.gpus_per_node)
    micro, head = t.microbatches, c.pp - 1
    # Mean chunk per rank. Durations read the ZeRO stage only for ZeRO-3's gathers
    # (durations._gather_s) and never the schedule or the micro-batch count.
    mesh = (c.dp, c.tp, c.pp, c.v, c.mbs, c.recompute)
    stage_d, _ = _cached(memo, ("d", *mesh, c.zero >= 3), lambda: durations.stage_durations(
        m, hw, t, layout, c.v, head))  # fmt: skip
    slowest = max(stage_d, key=lambda d: d.f + d.b + d.w)
    split = _cached(memo, ("split", c.pp, c.v), lambda: shapes.even_chunk_layers(m, c.pp, c.v))
    frontier = _frontier(c, micro, split)
    par, inflight = (c.dp, c.tp, c.pp), _peak_inflight(c, micro)
    params = _cached(memo, ("params", c.pp, c.tp, c.v), lambda: memory.rank_params(
        m, c.pp, c.tp, c.v, head, split))  # fmt: skip
    stages = memory.stage_memory(
        m, t, par, c.v, head, inflight, split, frontier=frontier, params=params
    )
    rank_params = max(params)
    end = _cached(memo, ("tail", *mesh, c.zero), lambda: step.tail(
        rank_params, t, layout, hw, stage_d, c.v))  # fmt: skip
    step_s = _makespan(c, micro, slowest) + end.dp_s + end.optim_s
    peak = max(s.total_bytes for s in stages)
    return {"tokens_per_s": batch * m.seq_len / step_s, "peak_bytes": peak,
            "fits": peak <= hw.hbm_gib * GIB}  # fmt: skip


def scenario_of(c: Candidate, model: str, hardware: str, batch: int) -> Scenario:
    return Scenario(
        dp=c.dp, tp=c.tp, pp=c.pp, schedule=c.schedule, virtual_stages=c.v,
        microbatches=c.microbatches(batch), micro_batch_size=c.mbs, zero=c.zero,
        recompute=c.recompute, model=model, hardware=hardware,
    )  # fmt: skip


def _siblings(c: Candidate, batch: int) -> list[Candidate]:
    """SIBLINGS of a shortlisted candidate that its pipeline shape allows (none at pp = 1,
    where every schedule is the same)."""
    out = []
    if c.pp == 1:
        return out
    for name in SIBLINGS.get(c.schedule, ()):
        try:
            schedules.validate(ScheduleName(name), c.pp, c.microbatches(batch), c.v)
        except schedules.ScheduleError:
            continue
        out.append(replace(c, schedule=name))
    return out


def _simulated(
    c: Candidate, model: str, hardware: str, batch: int, registry: Registry
) -> dict[str, Any] | None:
    """The exact (simulated) cost numbers of one candidate, without the layout's JSON; None
    for a sibling whose scenario is refused (e.g. too few layers for DualPipeV's 2p chunks)."""
    s = scenario_of(c, model, hardware, batch)
    try:
        _, _, cost = prepare(s, registry)
    except ScenarioError:
        if c.schedule in SIBLING_NAMES:
            return None
        raise
    return {**cost.sections, "query": s.query(), "scenario": s.model_dump(mode="json"),
            "bubble_fraction": cost.timeline.bubble_fraction}  # fmt: skip


def plan(
    model: str,
    hardware: str,
    gpus: int,
    global_batch: int,
    top: int = 10,
    registry: Registry = HARDWARE,
) -> dict[str, Any]:
    """Rank every valid configuration; the best ``top`` are simulated exactly. ``hardware``
    names an entry of ``registry`` (the presets, plus the server's loaded profiles)."""
    m, hw = MODELS[model], registry[hardware]
    pool = candidates(m, hw, gpus, global_batch)
    memo: dict = {}
    scored = [(estimate(c, m, hw, global_batch, memo), c) for c in pool]
    fitting = sorted((x for x in scored if x[0]["fits"]), key=lambda x: -x[0]["tokens_per_s"])
    misfits = sorted((x for x in scored if not x[0]["fits"]), key=lambda x: x[0]["peak_bytes"])
    shortlist = [c for _, c in fitting[: top + 5]]
    extra = [s for c in shortlist for s in _siblings(c, global_batch)]
    shortlist += extra
    views = [(_simulated(c, model, hardware, global_batch, registry), c) for c in shortlist]
    views = [x for x in views if x[0] is not None and x[0]["memory"]["fits"]]
    views.sort(key=lambda x: -x[0]["tokens_per_s"])
    views = views[:top]
    best = views[0][0]["tokens_per_s"] if views else 1.0
    rows = [_row(v, why_of(v, best, i)) for i, (v, _) in enumerate(views)]
    closest = [_simulated(c, model, hardware, global_batch, registry) for _, c in misfits[:3]]
    return {
        "model": model,
        "hardware": hardware,
        "gpus": gpus,
        "global_batch": global_batch,
        "searched": len(pool) + len(extra),
        "fitting": len(fitting),
        "results": rows,
        "not_fitting": [_row(v, why_of(v, best, -1)) for v in closest],
    }


def _row(view: dict[str, Any], why: dict[str, Any]) -> dict[str, Any]:
    return {
        "query": view["query"],
        "dp": view["scenario"]["dp"],
        "tp": view["scenario"]["tp"],
        "pp": view["scenario"]["pp"],
        "schedule": view["scenario"]["schedule"],
        "virtual_stages": view["scenario"]["virtual_stages"],
        "micro_batch_size": view["scenario"]["micro_batch_size"],
        "microbatches": view["scenario"]["microbatches"],
        "zero": view["scenario"]["zero"],
        "recompute": view["scenario"]["recompute"],
        "tokens_per_s": view["tokens_per_s"],
        "mfu": view["mfu"],
        "step_time_s": view["step_time_s"],
        "peak_bytes": view["memory"]["peak_bytes"],
        "fits": view["memory"]["fits"],
        "why": why,
        "reason": reason_text(why),
    }
