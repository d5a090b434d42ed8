"""Configuration planner: every valid (dp, tp, pp, schedule, v, micro-batch, zero, recompute)
for a model, a GPU count and a global batch, ranked by predicted tokens/s among those that fit.
Sequence parallelism and the overlaps are set as frameworks run them (planner_search.knobs).
A mixture of experts also searches ep, a sequence past 8k tokens cp (planner_axes.pool); a
dense model at 8k or fewer is searched in 3D. After the closed-form ranking, the ZeRO-3
candidates that could rank near the top are tried with HSDP's smaller shard groups
(planner_hsdp), and with fp8=search the fastest again in the hardware's FP8 recipes
(planner_fp8); each such row's why says what it gains over the same row without.

Two passes keep 1,024 GPUs x 175B near a second: a closed-form pass over every candidate
(planner_search, planner_forms), then the full simulation of a shortlist of SHORTLIST, with the
schedules that have no closed form beside their relatives, re-ranked by their simulated
numbers (with a cache the plan owns: what a pipeline shape alone decides is built once). The
shortlist's size does not depend on ``top``, so neither do the ranking and the winner:
``top`` only cuts the list shown. DualPipe(V), which has no closed form, is simulated only
beside a shortlisted 1F1B relative.

Rows are ranked by speed, except that a row with less than ``headroom`` of HBM free (tight)
must be faster by more than the model's error band to come above one with room; each row
says whether a validated published run is like it (planner_trust).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core import schedules
from app.core.evaluate import planner_fp8 as fp8s
from app.core.evaluate import planner_hsdp as hsdp
from app.core.evaluate.one_scenario import Registry, prepare
from app.core.evaluate.planner_axes import pool as search_pool
from app.core.evaluate.planner_forms import frontier as _frontier
from app.core.evaluate.planner_forms import makespan as _makespan
from app.core.evaluate.planner_forms import peak_inflight as _peak_inflight
from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import Candidate, candidates, estimate
from app.core.evaluate.planner_trust import (
    DEFAULT_HEADROOM,
    Judge,
    Shape,
    Verdict,
    extrapolated,
    is_tight,
    margin,
    rank_speed,
    unjudged,
)
from app.core.evaluate.planner_why import axes_of, framework_notes, reason_text, why_of
from app.core.inputs import specs
from app.core.inputs.presets import HARDWARE, MODELS, ModelSpec
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.schedules import ScheduleName
from app.core.support.gc_pause import gc_paused

__all__ = [
    "HARDWARE", "MODELS", "SHORTLIST", "Candidate", "_frontier", "_makespan", "_peak_inflight",
    "candidates", "estimate", "framework_notes", "plan", "reason_text",
]  # fmt: skip

# Schedules with no closed form to rank by are simulated beside their closest relative
# whenever it makes the shortlist: interleaved-zb is interleaved with W split off and
# scheduled into the bubbles; DualPipe(V) run 1F1B's micro-batches in both directions.
SIBLINGS = {"interleaved": ("interleaved-zb",), "1f1b": ("dualpipev", "dualpipe")}
SIBLING_NAMES = frozenset(n for names in SIBLINGS.values() for n in names)
# Scenario fields of a model's shape (scenario.ARCH_FIELDS, MOE_FIELDS) by name.
ModelFields = dict[str, Any]
# Candidates simulated, whatever ``top`` asks (the API's top is at most 20).
SHORTLIST = 24


def scenario_of(
    c: Candidate, model: str, hardware: str, batch: int, shape: ModelFields | None = None
) -> Scenario:
    """The candidate as a scenario (its share link); ``shape``: Scenario fields that edit the
    preset or describe a custom model (ARCH_FIELDS, MOE_FIELDS: e.g. seq_len), if any.
    cp, ep and order are left out of the query where they are the defaults (3D rows)."""
    five = {"cp": c.cp, "ep": c.ep, "order": c.order} if c.cp > 1 or c.ep > 1 else {}
    if c.fp8 != "none":
        five["fp8"] = c.fp8
    if c.dp_shard is not None:  # HSDP; None (plain FSDP) stays out of the query
        five["dp_shard"] = c.dp_shard
    return Scenario(
        dp=c.dp, tp=c.tp, pp=c.pp, schedule=c.schedule, virtual_stages=c.v,
        microbatches=c.microbatches(batch), micro_batch_size=c.mbs, zero=c.zero,
        recompute=c.recompute, model=model, hardware=hardware, sequence_parallel=c.sp,
        tp_comm_overlap=c.tp_overlap, overlap_grad_reduce=c.grad_overlap,
        overlap_param_gather=c.param_overlap, **five, **(shape or {}),
    )  # fmt: skip


def searched(
    model: str,
    hardware: str,
    gpus: int,
    batch: int,
    registry: Registry = HARDWARE,
    shape: ModelFields | None = None,
    fp8: str = "none",
) -> tuple[Pass, list[Candidate]]:
    """The plan's closed-form pass and the pool it ranks (planner_axes.pool; plan() adds
    HSDP's shard groups and fp8=search's recipes to the best of it: planner_hsdp,
    planner_fp8), which a caller may count against a bound before handing both to plan();
    ``fp8``: the recipe every candidate runs (the meshes are found at 16 bits: FP8
    only adds memory, so a mesh pruned there would not fit with it either); "none" or
    "search" (plan's ``recipes`` then adds the FP8 candidates): the pool is bf16."""
    m, hw = model_of(model, shape), registry[hardware]
    closed = Pass(m, hw, batch)
    pool = search_pool(m, hw, gpus, batch, closed)
    if fp8 in ("none", fp8s.SEARCH):
        return closed, pool
    return closed, [replace(c, fp8=fp8) for c in pool]


def model_of(model: str, shape: ModelFields | None = None) -> ModelSpec:
    """The preset, or the model its scenario describes with ``shape`` (specs.model_of, so
    the closed-form pass and the simulated rows price one model)."""
    return specs.model_of(Scenario(model=model, **shape)) if shape else MODELS[model]


def _shortlist(levels: list[list[tuple[float, float, Candidate]]]) -> list[Candidate]:
    """The first SHORTLIST of each ranking (3D/axes pool, with HSDP, with FP8), in the last
    ranking's order. A variant ranked among the first may push a candidate out of them,
    whose DualPipe(V) or interleaved-zb sibling (simulated only beside it) would have won;
    keeping every level's first SHORTLIST keeps the answer of the plan without HSDP, and
    fp8=search simulates every bf16 candidate fp8=none does, so what it says bf16 takes is
    fp8=none's first row exactly (tests/core/test_planner_fp8.py)."""
    chosen = {c for level in levels for _, _, c in level[:SHORTLIST]}
    return [c for _, _, c in levels[-1] if c in chosen]


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
    c: Candidate,
    model: str,
    hardware: str,
    batch: int,
    registry: Registry,
    cache: dict,
    shape: ModelFields | None = None,
) -> dict[str, Any] | None:
    """The exact (simulated) cost numbers of one candidate, without the layout's JSON; None
    for a sibling whose scenario is refused (e.g. too few layers for DualPipeV's 2p chunks).
    ``cache``: the plan's own (prepare keeps what a pipeline shape alone decides in it)."""
    s = scenario_of(c, model, hardware, batch, shape)
    try:
        # No what-ifs: they feed the advice alone, which no row of the plan shows (_row).
        _, _, cost = prepare(s, registry, cache, what_ifs=False)
    except ScenarioError:
        if c.schedule in SIBLING_NAMES:
            return None
        raise
    # Scenario.query leaves out the default model; beside shape fields that would read as a
    # custom model (Scenario._shape_without_model_is_custom), so the link names it.
    query = {"model": model, **s.query()} if shape else s.query()
    return {**cost.sections, "query": query, "scenario": s.model_dump(mode="json"),
            "bubble_fraction": cost.timeline.bubble_fraction}  # fmt: skip


# Acyclic work, like simulate: the plan's cache holds every shortlisted schedule's actions and
# timeline, which the cyclic collector rescanned at each collection (7-10% of a plan's CPU).
# The API's limiter ran plan() paused already (app/api/limits.py); direct callers now do too.
@gc_paused
def plan(
    model: str,
    hardware: str,
    gpus: int,
    global_batch: int,
    top: int = 10,
    registry: Registry = HARDWARE,
    headroom: float = DEFAULT_HEADROOM,
    judge: Judge = unjudged,
    search: tuple[Pass, list[Candidate]] | None = None,
    shape: ModelFields | None = None,
    recipes: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Rank every valid configuration; the best SHORTLIST are simulated exactly and the first
    ``top`` of them returned. ``hardware`` names an entry of ``registry`` (the presets, plus
    the server's loaded profiles); ``headroom``: the share of HBM a row must leave free not to
    be tight; ``judge``: what the published runs say of a row (planner_trust); ``search``:
    searched(...) when the caller has counted its pool already (app/api/plan.py);
    ``shape``: Scenario fields editing the preset (e.g. seq_len) or describing a custom
    model (model="custom"), as scenario_of puts them in every row's query; ``recipes``: FP8
    recipes searched beside bf16 (planner_fp8.recipes(hw) for fp8=search; None: no search,
    and the answer has no "fp8" part)."""
    hw = registry[hardware]
    capacity = hw.hbm_gib * (1 << 30)
    closed, pool = search or searched(model, hardware, gpus, global_batch, registry, shape)
    cache: dict[tuple, Any] = {}  # this plan's, for prepare: nothing outlives the call
    verdicts: dict[tuple, Verdict] = {}

    def verdict(c: Candidate) -> Verdict:
        # Keyed by the fields a Shape reads, so that ranking thousands of candidates builds
        # one Shape per distinct shape only.
        key = (c.schedule, c.dp, c.tp, c.pp, c.zero, c.sp, c.tp_overlap, c.grad_overlap,
               c.param_overlap)  # fmt: skip
        if key not in verdicts:
            verdicts[key] = judge(Shape(hardware, c.schedule, c.dp, c.tp, c.pp, c.zero, c.knobs))
        return verdicts[key]

    def rank(tokens: float, peak: float, c: Candidate) -> tuple[float, bool]:
        """Sort key: discounted speed first; on a tie, the row with room first."""
        tight = is_tight(peak, capacity, headroom)
        return -rank_speed(tokens, tight, verdict(c).band), tight

    # planner_pass: estimate's numbers, the speed priced only where the memory fits.
    peaks = list(zip(closed.peaks(pool), pool, strict=True))
    fitting = [(closed.tokens_per_s(c), peak, c) for peak, c in peaks if peak <= capacity]
    fitting.sort(key=lambda x: rank(*x))
    # planner_hsdp, planner_fp8: the fastest candidates again with HSDP, then in FP8. Each
    # ranking's first SHORTLIST are simulated (_shortlist): the variants never take the
    # place of a candidate the plan without them simulates.
    levels = [fitting]
    more = hsdp.variants(closed, fitting, hsdp.HSDP_TRIED)
    fitting, pool = sorted(fitting + more, key=lambda x: rank(*x)), pool + [c for *_, c in more]
    levels.append(fitting)
    tried = recipes or ()
    if tried:
        more = fp8s.variants(closed, fitting, tried)
        fitting = sorted(fitting + more, key=lambda x: rank(*x))
        pool = pool + [c for _, _, c in more]
        levels.append(fitting)
    misfits = sorted((x for x in peaks if x[0] > capacity), key=lambda x: x[0])
    shortlist = _shortlist(levels)
    extra = [s for c in shortlist for s in _siblings(c, global_batch)]
    shortlist += extra
    args = (model, hardware, global_batch, registry, cache, shape)
    views = [(_simulated(c, *args), c) for c in shortlist]
    views = [x for x in views if x[0] is not None and x[0]["memory"]["fits"]]
    views.sort(key=lambda x: rank(x[0]["tokens_per_s"], x[0]["memory"]["peak_bytes"], x[1]))
    bf16 = next((v for v, c in views if c.fp8 == "none"), None)
    views = views[:top]
    best = views[0][0]["tokens_per_s"] if views else 1.0
    rows = [_row(v, c, best, i, headroom, verdict(c), axes_of(closed, c))
            for i, (v, c) in enumerate(views)]  # fmt: skip
    closest = [(_simulated(c, *args), c) for _, c in misfits[:3]]
    searched_fp8 = {} if recipes is None else {
        "fp8": fp8s.summary(tried, hardware, views[0][0] if views else None, bf16)}  # fmt: skip
    return {
        "model": model,
        "hardware": hardware,
        "gpus": gpus,
        "global_batch": global_batch,
        "headroom": headroom,
        "shortlist": SHORTLIST,
        "searched": len(pool) + len(extra),
        "fitting": len(fitting),
        "results": rows,
        "not_fitting": [_row(v, c, best, -1, headroom, verdict(c)) for v, c in closest],
        **searched_fp8,
    }


def _row(
    view: dict[str, Any],
    c: Candidate,
    best: float,
    rank: int,
    headroom: float,
    verdict: Verdict,
    axes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    s, mem = view["scenario"], view["memory"]
    free = margin(mem["peak_bytes"], mem["capacity_bytes"])
    tight = is_tight(mem["peak_bytes"], mem["capacity_bytes"], headroom)
    beyond = extrapolated(verdict, view["mfu"])
    trust = {"tight": tight, "margin": free, "margin_bytes": mem["capacity_bytes"] -
             mem["peak_bytes"], "headroom": headroom, "extrapolated": beyond,
             "band": verdict.band, "band_level": verdict.band_level,
             "mfu_ceiling": verdict.mfu_ceiling}  # fmt: skip
    why = why_of(view, best, rank, trust) | (axes or {})
    return {
        "query": view["query"],
        **{k: s[k] for k in ("dp", "tp", "pp", "schedule", "virtual_stages")},
        **{k: s[k] for k in ("micro_batch_size", "microbatches", "zero", "recompute")},
        **{k: s[k] for k in ("sequence_parallel", "tp_comm_overlap")},
        **{k: s[k] for k in ("overlap_grad_reduce", "overlap_param_gather")},
        "tokens_per_s": view["tokens_per_s"],
        "mfu": view["mfu"],
        "step_time_s": view["step_time_s"],
        "peak_bytes": mem["peak_bytes"],
        "fits": mem["fits"],
        "tight": tight,
        "margin_bytes": trust["margin_bytes"],
        "margin": free,
        "extrapolated": None if beyond is None else bool(beyond),
        "error_band": verdict.band,
        "why": why,
        "reason": reason_text(why),
    }
