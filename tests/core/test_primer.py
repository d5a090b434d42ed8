"""The collectives primer's core: the ring's holdings, its bytes, ZeRO's partitions and
schedule, and activation memory over the step, each against an independent count."""

from __future__ import annotations

import pytest

from app.core.cost import comm
from app.core.evaluate import prepare
from app.core.evaluate.primer import PrimerParams, activation_sizes, primer
from app.core.inputs import specs
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.simulate import Event
from app.core.views.collectives_primer import MAX_DRAWN_RING, ring_json, ring_steps
from app.core.views.memory_timeline import stage_points, thin
from app.core.views.zero_primer import schedule, shards, zero_json


@pytest.mark.parametrize("ranks", [[0, 1], [3, 7, 11], [0, 2, 4, 6, 8], list(range(0, 64, 8))])
def test_every_rank_ends_with_the_full_sum_after_2_n_minus_1_steps(ranks):
    n = len(ranks)
    steps = ring_steps(ranks)
    assert len(steps) - 1 == 2 * (n - 1)
    everyone = frozenset(range(n))
    final = steps[-1].holdings
    assert all(chunk == everyone for row in final for chunk in row)
    # Half way, after reduce-scatter, each rank holds exactly one full chunk: (i + 1) mod n.
    mid = steps[n - 1].holdings
    for i, row in enumerate(mid):
        assert [c for c, held in enumerate(row) if held == everyone] == [(i + 1) % n]
    # No earlier step is complete: the ring needs every one of its 2(n-1) steps.
    assert not all(chunk == everyone for row in steps[-2].holdings for chunk in row)


def test_each_step_sends_one_chunk_to_the_right_hand_neighbour():
    ranks = [5, 9, 13, 17]
    for step in ring_steps(ranks)[1:]:
        assert [(m.src, m.dst) for m in step.sends] == [(5, 9), (9, 13), (13, 17), (17, 5)]
        assert len({m.chunk for m in step.sends}) == len(ranks)  # every chunk moves once


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_bytes_per_rank_are_2_n_minus_1_over_n_of_the_buffer(n):
    size = 3.0e9
    ring = ring_json(list(range(n)), size)
    sent = sum(s["sent_bytes"] for s in ring["steps"])
    assert sent == pytest.approx(2 * (n - 1) / n * size)
    assert ring["per_rank_bytes"] == pytest.approx(comm.ring_factor(n) * size)
    assert ring["steps"][-1]["sent_so_far_bytes"] == pytest.approx(sent)
    assert ring["steps"][-1]["holds"] == [[n] * n] * n


def test_a_large_group_keeps_its_bytes_but_is_not_drawn():
    ring = ring_json(list(range(MAX_DRAWN_RING + 1)), 1.0e6)
    assert not ring["drawn"] and ring["steps"] == []
    assert ring["per_rank_bytes"] == pytest.approx(2 * MAX_DRAWN_RING / (MAX_DRAWN_RING + 1) * 1e6)


@pytest.mark.parametrize("params,n", [(1000, 4), (1001, 3), (7, 8)])
def test_zero_shards_are_disjoint_and_sum_to_the_total(params, n):
    parts = shards(params, list(range(0, 2 * n, 2)))
    assert sum(p["params"] for p in parts) == params
    assert [p["first_param"] for p in parts[1:]] == [p["last_param"] for p in parts[:-1]]
    assert parts[0]["first_param"] == 0 and parts[-1]["last_param"] == params


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_zero_bytes_per_gpu_sum_to_the_unsharded_total(zero):
    s = Scenario(dp=4, tp=1, pp=2, zero=zero)
    t, dp = specs.training_of(s), 4
    z = zero_json(10_000, t, [0, 1, 2, 3], 8, 0.0)
    row, plain = z["stages"][zero], z["stages"][0]
    for key, part in (("weights_bytes", "weights"), ("grads_bytes", "grads")):
        split = row["partitioned"][part]
        assert row[key] * (dp if split else 1) == pytest.approx(plain[key])
    optimizer = row["optimizer_bytes"] * (dp if zero >= 1 else 1)
    assert optimizer == pytest.approx(plain["optimizer_bytes"])


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
@pytest.mark.parametrize("schedule_name", ["1f1b", "naive"])
def test_the_zero_schedule_moves_what_the_cost_model_counts(zero, schedule_name):
    s = Scenario(dp=4, tp=2, pp=2, zero=zero, schedule=schedule_name)
    layout, _, cost = prepare(s)
    # comm.step_comm_bytes counts the rank with the most parameters.
    params = max(st["params"] for st in cost.sections["memory"]["per_stage"])
    plan = schedule(params, specs.training_of(s), 4, zero, 16)
    assert sum(e["bytes"] for e in plan) == pytest.approx(cost.sections["comm"]["dp_bytes"])
    colls = [(e["phase"], e["collective"]) for e in plan if e["collective"]]
    if zero == 3:
        assert ("forward", "all_gather") in colls
    elif schedule_name == "1f1b":
        expect = [("after_backward", "all_reduce")] if zero == 0 else [
            ("after_backward", "reduce_scatter"), ("after_step", "all_gather")]  # fmt: skip
        assert colls == expect


def test_the_scenarios_zero_row_is_the_cost_models_memory():
    s = Scenario(dp=4, pp=2, zero=2)
    view = primer(s, PrimerParams(rank=0))
    row = view["memory"]["per_stage"][0]
    chosen = view["zero"]["stages"][2]
    for key in ("weights_bytes", "optimizer_bytes", "activations_bytes"):
        assert chosen[key] == pytest.approx(row[key])
    # The primer's gradients are all of them: cost/memory.py splits off the fp32 buffer.
    assert chosen["grads_bytes"] == pytest.approx(row["grads_bytes"] + row["grad_accum_bytes"])
    # Its total is model state plus activations, without the transients, the allocator's
    # fragmentation or the floor (cost/memory.py's allocated, reserved and total add them).
    state = chosen["weights_bytes"] + chosen["grads_bytes"] + chosen["optimizer_bytes"]
    assert chosen["total_bytes"] == pytest.approx(state + row["activations_bytes"])
    assert row["total_bytes"] > chosen["total_bytes"]


@pytest.mark.parametrize(
    "query",
    [
        {"pp": 4, "microbatches": 8, "schedule": "1f1b"},
        {"pp": 4, "microbatches": 8, "schedule": "gpipe"},
        {"pp": 4, "microbatches": 8, "schedule": "zb-h1"},
        {"pp": 2, "microbatches": 4, "schedule": "interleaved", "virtual_stages": 2},
        {"pp": 2, "microbatches": 4, "schedule": "naive"},
    ],
)
def test_the_memory_lines_top_is_peak_inflight_times_one_microbatch(query):
    s = Scenario(**query)
    view = primer(s, PrimerParams())
    _, _, cost = prepare(s)
    layers = cost.pipeline.layers
    per_mb = activation_sizes(s, layers)
    for line in view["memory_timeline"]["stages"]:
        st = line["stage"]
        assert len(set(per_mb[st])) == 1  # even split: every chunk holds the same
        expected = cost.timeline.peak_inflight[st] * per_mb[st][0]
        assert line["peak_bytes"] == pytest.approx(expected)
        assert max(line["bytes"]) == pytest.approx(expected)
        assert line["bytes"][-1] == pytest.approx(0.0)  # every backward freed its forward


def test_memory_rises_through_forwards_and_falls_through_backwards():
    events = [
        Event(0, "F", 0, 0, 0.0, 1.0),
        Event(0, "F", 1, 0, 1.0, 2.0),
        Event(0, "B", 0, 0, 2.0, 4.0),
        Event(0, "W", 0, 0, 4.0, 5.0),
        Event(0, "B", 1, 0, 5.0, 7.0),
    ]
    points = stage_points(events, 0, [10.0], forward_only=False)
    assert [v for _, v in points] == [0, 0, 10, 10, 20, 20, 10, 10, 0]
    assert points[-1] == (7.0, 0.0)


def test_thinning_keeps_the_peak_and_the_ends():
    points = [(float(i), float(i % 97) + (500.0 if i == 4321 else 0.0)) for i in range(10_000)]
    kept = thin(points, 100)
    assert len(kept) <= 102 and (4321.0, points[4321][1]) in kept
    assert kept[0] == points[0] and kept[-1] == points[-1]


def test_the_group_is_the_layouts_and_bad_state_names_its_field():
    s = Scenario(dp=2, tp=4, pp=2)
    view = primer(s, PrimerParams(group="tp", rank=6, step=3))
    assert view["ring"]["ranks"] == [4, 5, 6, 7] and view["group"]["position"] == 2
    assert view["ring"]["size_bytes"] == comm.tp_message_bytes(
        specs.model_of(s), specs.training_of(s)
    )
    with pytest.raises(ScenarioError) as rank_err:
        primer(s, PrimerParams(rank=16))
    assert rank_err.value.field == "rank"
    with pytest.raises(ScenarioError) as step_err:
        primer(s, PrimerParams(group="tp", step=7))
    assert step_err.value.field == "step"
