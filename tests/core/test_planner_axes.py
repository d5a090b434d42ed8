"""The planner searches context and expert parallelism (issue 27, planner_axes): the fast
pass prices cp and ep as the one-candidate reference does, the mesh pruning drops only
meshes none of whose candidates fit, a mixture of experts is planned at the ep it needs and
a long sequence at the cp it needs, every row opens as a scenario with the row's numbers,
and a dense model at 8k tokens or fewer is searched in 3D exactly as before."""

from dataclasses import replace

import pytest

from app.core.evaluate import planner_axes as axes
from app.core.evaluate.one_scenario import prepare
from app.core.evaluate.planner import model_of, plan
from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import candidates, estimate, mesh_candidates
from app.core.inputs.presets import HARDWARE, MODELS
from app.core.inputs.scenario import Scenario

H100 = HARDWARE["h100-sxm"]
# (model, Scenario fields editing it, GPUs, global batch): extended pools small enough to
# price every candidate one by one.
SMALL = [
    ("mixtral-8x7b", None, 16, 64),
    ("llama3-8b", {"seq_len": 32_768}, 16, 16),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("model", "shape", "gpus", "batch"), SMALL)
def test_pass_prices_cp_and_ep_as_estimate_does(model, shape, gpus, batch):
    m = model_of(model, shape)
    fast = Pass(m, H100, batch)
    pool = axes.pool(m, H100, gpus, batch, fast)
    wide = {c.ep for c in pool} | {c.cp for c in pool}
    assert max(wide) > 1, "the pool must hold cp > 1 or ep > 1 candidates"
    peaks, memo, fits = dict(zip(pool, fast.peaks(pool), strict=True)), {}, 0
    for c in pool:
        want = estimate(c, m, H100, batch, memo)
        assert peaks[c] == want["peak_bytes"], c
        if want["fits"]:
            fits += 1
            assert fast.tokens_per_s(c) == want["tokens_per_s"], c
    assert fits


# Searches where some meshes are dropped and some kept.
PRUNED = [
    ("mixtral-8x22b", None, 32, 128),
    ("llama3-70b", {"seq_len": 131_072}, 64, 16),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("model", "shape", "gpus", "batch"), SMALL + PRUNED)
def test_a_mesh_is_dropped_only_when_none_of_its_candidates_fits(model, shape, gpus, batch):
    """The lightest candidate bounds its mesh from below, so pruning by it loses no row."""
    m = model_of(model, shape)
    fast = Pass(m, H100, batch)
    kept, dropped = set(axes.meshes(m, H100, gpus, batch, fast)), 0
    for mesh in axes.every_mesh(m, H100, gpus, batch):
        pool = mesh_candidates(m, batch, *mesh)
        floor = axes.floor(fast, m, mesh)
        assert min(fast.peaks(pool)) == floor, mesh
        if mesh not in kept:
            dropped += 1
            assert floor > fast.capacity
    assert kept and (dropped or (model, shape, gpus, batch) in SMALL)


@pytest.mark.timeout(300)
def test_a_mixture_of_experts_is_planned_at_the_ep_it_needs():
    """Qwen3-235B-A22B on 64 H100s: the fastest row shards the experts (ep > 1), and on its
    mesh no candidate at ep = 1 fits."""
    got = plan("qwen3-235b-a22b", "h100-sxm", 64, 256, top=5)
    best = got["results"][0]
    ep = int(best["query"]["ep"])
    assert ep > 1 and best["query"]["order"] == "tp-cp-ep-dp-pp"
    m = MODELS["qwen3-235b-a22b"]
    fast = Pass(m, H100, 256)
    flat = mesh_candidates(m, 256, best["dp"], best["tp"], best["pp"], 1, 1)
    assert flat and min(fast.peaks(flat)) > fast.capacity
    _rows_open(got, "qwen3-235b-a22b", None)


@pytest.mark.timeout(300)
def test_a_long_sequence_is_planned_at_the_cp_it_needs():
    """Llama 3 8B at 128k tokens on 32 H100s: the fastest row splits the sequence (cp > 1,
    selective recompute), and the same row with its cp ranks given to dp does not fit."""
    shape = {"seq_len": 131_072}
    got = plan("llama3-8b", "h100-sxm", 32, 32, shape=shape)
    best = got["results"][0]
    cp = int(best["query"]["cp"])
    assert cp > 1 and best["recompute"] == "selective"
    assert best["query"]["seq_len"] == "131072"
    m = model_of("llama3-8b", shape)
    fast = Pass(m, H100, 32)
    ranked = [c for c in axes.pool(m, H100, 32, 32, fast) if c.cp == cp]
    same = next(
        c for c in ranked
        if (c.dp, c.tp, c.pp, c.schedule, c.mbs, c.zero) == (best["dp"], best["tp"], best["pp"],
        best["schedule"], best["micro_batch_size"], best["zero"]) and c.recompute == "selective"
    )  # fmt: skip
    flat = replace(same, dp=same.dp * cp, cp=1, grad_overlap=True)
    assert fast.peak(same) <= fast.capacity < fast.peak(flat)
    _rows_open(got, "llama3-8b", shape)


@pytest.mark.timeout(300)
def test_a_budgeted_pool_keeps_the_fastest_candidate():
    """Past its budget the pool keeps the meshes whose probe is fastest: on Qwen3-30B-A3B
    over 64 H100s, a quarter of the candidates still hold the fastest one that fits."""
    m, batch = MODELS["qwen3-30b-a3b"], 256
    fast = Pass(m, H100, batch)
    full = axes.pool(m, H100, 64, batch, fast, budget=10**6)
    cut = axes.pool(m, H100, 64, batch, fast, budget=len(full) // 4)
    assert len(cut) <= len(full) // 4 < len(full)

    def best(pool):
        fits = [c for c, p in zip(pool, fast.peaks(pool), strict=True) if p <= fast.capacity]
        return max(fits, key=fast.tokens_per_s)

    assert best(cut) == best(full)


def _rows_open(got: dict, model: str, shape: dict | None) -> None:
    """Every row (fitting or not) is a scenario that validates and prices to the row's own
    numbers: its share link opens."""
    for row in [*got["results"], *got["not_fitting"]]:
        s = Scenario(**row["query"])
        assert s.model == model and s.world_size == got["gpus"]
        if shape:
            assert {k: getattr(s, k) for k in shape} == shape
        _, _, cost = prepare(s)
        assert cost.sections["tokens_per_s"] == row["tokens_per_s"]
        assert cost.sections["memory"]["peak_bytes"] == row["peak_bytes"]


@pytest.mark.parametrize("model", ["gpt3-175b", "llama3-70b", "llama3-8b"])
def test_a_dense_model_at_8k_or_fewer_is_searched_in_3d_as_before(model):
    m, hw = MODELS[model], HARDWARE["a100-80g"]
    assert m.seq_len <= axes.CP_FROM and not axes.extended(m)
    assert axes.pool(m, hw, 256, 512, Pass(m, hw, 512)) == candidates(m, hw, 256, 512)
    longer = replace(m, seq_len=4 * axes.CP_FROM)
    assert axes.extended(longer) and axes.cp_sizes(longer, 64) == [1, 2, 4, 8, 16, 32]


def test_cp_and_ep_sizes_follow_the_scenario_rules():
    """cp splits the sequence into 2 x cp equal chunks; ep divides the experts and dp x cp:
    1, the largest inside a node and the largest of all."""
    m = replace(MODELS["llama3-8b"], seq_len=3 * 4096 * 2)  # 24,576 = 2^13 x 3
    assert axes.cp_sizes(m, 48) == [1, 2, 3, 4, 6, 8, 12, 16, 24]
    moe = MODELS["qwen3-235b-a22b"]  # 128 experts
    assert axes.ep_sizes(moe, tp=2, folded=64, gpus_per_node=8) == [1, 4, 64]
    assert axes.ep_sizes(moe, tp=8, folded=6, gpus_per_node=8) == [1, 2]
    assert axes.ep_sizes(MODELS["llama3-8b"], tp=1, folded=64, gpus_per_node=8) == [1]
