"""The planner's pool with context and expert parallelism (issue 27): the 3D candidates of
planner_search, and for long sequences every cp, for a mixture of experts a few ep, on each
(tp, cp, pp, dp) mesh.

cp splits each sequence into 2 x cp equal causal chunks (inputs/parallel_axes.py:
seq % (2 x cp) == 0), searched only above CP_FROM tokens: a dense model at or below it is
planned as before (tests/core/test_planner_golden.py). ep divides the experts and folds over
dp x cp (Megatron's expert grid, layout/mesh.py). Of the ep that qualify, three are searched
per mesh: 1, the largest whose group stays inside one node (tp x ep ranks on NVLink), and the
largest of all. Between them a larger ep holds fewer experts and all-reduces fewer expert
gradients (cost/memory.py, cost/comm.py) while its dispatch crosses the same links, so the
ends of each link class are where the answer lies (a heuristic, not a proof).

A searched mesh with cp > 1, or of a mixture of experts, or of a long sequence, is first
priced at its lightest candidates (1F1B, micro-batch 1, full recompute, ZeRO-2 and ZeRO-3
where dp > 1): every other candidate of the mesh holds at least as much (ZeRO-2 no more than
ZeRO-1 or 0, recompute and a smaller micro-batch never add memory; every other schedule
keeps at least 1F1B's in-flight layers: planner_forms.peak_inflight), so a mesh whose
lightest misfit is dropped whole (tests/core/test_planner_axes.py checks it mesh by mesh).
Past BUDGET candidates, the meshes left are searched fastest first, judged by one probe each
(1F1B, micro-batch 1, full recompute, ZeRO-1), so that the time budget of issue 27 holds: the
closed-form pass costs about 0.1 ms a candidate, and the shortlist's simulation the rest.
"""

from __future__ import annotations

from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import (
    Candidate,
    _divisors,
    candidates,
    knobs,
    mesh_candidates,
    tp_sizes,
)
from app.core.inputs.presets import HardwareSpec, ModelSpec

Mesh = tuple[int, int, int, int, int]  # dp, tp, pp, cp, ep
# Sequences above this many tokens search cp; at or below, a dense plan stays 3D (the golden
# plans). Llama 3 trained 8k sequences without CP and 128k with CP=16 (Dubey et al. 2024
# §3.3.2 and Table 4).
CP_FROM = 8192
# The largest cp searched: Llama 3's 16 at 128k, and one more doubling.
MAX_CP = 32
# Candidates of an extended pool, the fastest meshes first (by their probe), each taken whole:
# with 2,048, Qwen3-235B-A22B, Mixtral 8x22B and DeepSeek-V3 on 2,048 H100s and Llama 3 70B
# at 128k on 1,024 got the same first row as with no bound (9,000 to 17,000 candidates), in
# about 1.5 CPU-s (bench/bench_plan_axes.py; tests/core/test_planner_axes.py checks a case).
BUDGET = 2048


def extended(m: ModelSpec) -> bool:
    """Whether the pool goes beyond 3D: a mixture of experts, or a sequence past CP_FROM."""
    return bool(m.experts) or m.seq_len > CP_FROM


def cp_sizes(m: ModelSpec, ranks: int) -> list[int]:
    """cp dividing ``ranks`` (the GPUs over tp) and the sequence into 2 x cp equal chunks."""
    if m.seq_len <= CP_FROM:
        return [1]
    return [
        c for c in range(1, min(ranks, MAX_CP) + 1) if not ranks % c and not m.seq_len % (2 * c)
    ]


def ep_sizes(m: ModelSpec, tp: int, folded: int, gpus_per_node: int) -> list[int]:
    """1, the largest ep inside a node and the largest of all, each dividing the experts and
    ``folded`` (dp x cp) ranks; [1] for a dense model."""
    if not m.experts:
        return [1]
    fit = [e for e in _divisors(min(m.experts, folded)) if not m.experts % e and not folded % e]
    inside = [e for e in fit if tp * e <= gpus_per_node]
    return sorted({1, max(inside), max(fit)})


def lightest(m: ModelSpec, dp: int, tp: int, pp: int, cp: int, ep: int) -> list[Candidate]:
    """The mesh's candidates one of which holds the least memory (the module's note): 1F1B,
    micro-batch 1, full recompute, at ZeRO-2 and ZeRO-3 (whose gathered layers can outweigh
    what it shards further) where dp > 1."""
    zeros = (2, 3) if dp > 1 else (0,)
    return [
        Candidate(dp, tp, pp, "1f1b", 1, 1, z, "full", **knobs(m, tp, dp, z), cp=cp, ep=ep)
        for z in zeros
    ]


def floor(closed: Pass, m: ModelSpec, mesh: Mesh) -> float:
    """The least peak memory of any candidate of ``mesh``: its lightest's."""
    return min(closed.peaks(lightest(m, *mesh)))


def probe(m: ModelSpec, dp: int, tp: int, pp: int, cp: int, ep: int) -> Candidate:
    """The candidate a mesh's speed is judged by before it is searched: the lightest with
    ZeRO-1, whose step has no ZeRO-3 gathers to price (durations._gather_s)."""
    zero = 1 if dp > 1 else 0
    return Candidate(dp, tp, pp, "1f1b", 1, 1, zero, "full", **knobs(m, tp, dp, zero), cp=cp, ep=ep)


def every_mesh(m: ModelSpec, hw: HardwareSpec, gpus: int, batch: int) -> list[Mesh]:
    """Every (dp, tp, pp, cp, ep) the search takes: TP inside a node, cp and ep as above."""
    out = []
    for tp in tp_sizes(m, hw, gpus):
        for cp in cp_sizes(m, gpus // tp):
            for pp in _divisors(gpus // (tp * cp)):
                dp = gpus // (tp * cp * pp)
                if pp > m.layers or batch % dp:
                    continue
                out += [(dp, tp, pp, cp, ep) for ep in ep_sizes(m, tp, dp * cp, hw.gpus_per_node)]
    return out


def meshes(m: ModelSpec, hw: HardwareSpec, gpus: int, batch: int, closed: Pass) -> list[Mesh]:
    """every_mesh, less those whose lightest candidate does not fit."""
    return [
        x for x in every_mesh(m, hw, gpus, batch)
        if floor(closed, m, x) <= closed.capacity
    ]  # fmt: skip


def pool(
    m: ModelSpec, hw: HardwareSpec, gpus: int, batch: int, closed: Pass, budget: int = BUDGET
) -> list[Candidate]:
    """Every candidate to rank: planner_search's 3D pool for a dense model at or below
    CP_FROM; else the candidates of the meshes whose lightest candidate fits, the fastest
    meshes by their probe first, up to ``budget`` candidates (a mesh is taken whole).
    ``closed``: the plan's closed-form pass (its caches serve the ranking after)."""
    if not extended(m):
        return candidates(m, hw, gpus, batch)
    found = [
        (mesh, mesh_candidates(m, batch, *mesh)) for mesh in meshes(m, hw, gpus, batch, closed)
    ]
    if sum(len(c) for _, c in found) > budget:
        found.sort(key=lambda x: -closed.tokens_per_s(probe(m, *x[0])))
    out: list[Candidate] = []
    for _, more in found:
        if out and len(out) + len(more) > budget:
            break
        out += more
    return out
