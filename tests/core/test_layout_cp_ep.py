"""Layout with context (cp) and expert (ep) parallelism: rank <-> coordinate, the CP ring,
Megatron's expert-grid folding of ep over dp x cp, and the orders table with cp."""

from __future__ import annotations

from itertools import permutations

import pytest

from app.core.layout import mesh, orders
from app.core.layout.topology import AXES, ORDER_PRESETS, Layout, parse_order


def megatron_groups(sizes: dict[str, int], order: str, token: str) -> list[list[int]]:
    """Megatron-LM's RankGenerator.get_ranks(token) for one order (parallel_state.py's
    generate_masked_orthogonal_rank_groups, re-derived: the masked axes vary inside a group,
    the others pick the group), sorted as sets for comparison."""
    axes = order.split("-")
    world = 1
    for a in axes:
        world *= sizes[a]
    groups: dict[tuple[int, ...], list[int]] = {}
    for r in range(world):
        key, rest = [], r
        for a in axes:
            if a != token:
                key.append(rest % sizes[a])
            rest //= sizes[a]
        groups.setdefault(tuple(key), []).append(r)
    return sorted(groups.values())


def test_world_is_tp_cp_pp_dp_and_ep_adds_no_ranks():
    lay = Layout(dp=2, tp=2, pp=2, order=parse_order("megatron-5d"), cp=2, ep=4)
    assert lay.world_size == 2 * 2 * 2 * 2
    assert [lay.size(a) for a in ("etp", "ep", "edp")] == [2, 4, 1]


@pytest.mark.parametrize("order", ["tp-cp-dp-pp", "tp-pp-dp", "dp-cp-tp-pp", "cp-pp-tp-dp"])
def test_rank_and_coordinate_round_trip_with_cp(order):
    lay = Layout(dp=3, tp=2, pp=2, order=parse_order(order), gpus_per_node=4, cp=2)
    seen = set()
    for r in range(lay.world_size):
        c = lay.coord(r)
        assert lay.rank_of(c.dp, c.pp, c.tp, c.cp) == r
        seen.add((c.dp, c.pp, c.tp, c.cp))
    assert len(seen) == lay.world_size


def test_a_three_axis_order_places_cp_right_after_tp():
    three = Layout(dp=2, tp=2, pp=2, order=("tp", "pp", "dp"), cp=2)
    four = Layout(dp=2, tp=2, pp=2, order=("tp", "cp", "pp", "dp"), cp=2)
    assert three.dense_order == ("tp", "cp", "pp", "dp")
    assert [three.coord(r) for r in range(16)] == [four.coord(r) for r in range(16)]
    assert three.group("cp", 0) == [0, 2]  # cp stride = tp


def test_the_cp_ring_and_dense_groups_match_megatron_rank_generator():
    sizes = {"tp": 2, "cp": 2, "dp": 2, "pp": 2}
    lay = Layout(dp=2, tp=2, pp=2, order=parse_order("megatron-5d"), cp=2)
    for axis in ("tp", "cp", "dp", "pp"):
        assert sorted(lay.groups(axis)) == megatron_groups(sizes, "tp-cp-dp-pp", axis), axis
    assert lay.group("cp", 5) == [5, 7]


@pytest.mark.parametrize(("cp", "ep", "dp"), [(1, 2, 2), (2, 2, 2), (2, 4, 2), (4, 2, 1)])
def test_ep_folds_over_dp_cp_as_megatron_expert_grid(cp, ep, dp):
    # parallel_state.py: the expert RankGenerator(tp, ep, expert_dp, pp, cp=1) over the same
    # order string, expert_dp = world // (tp * ep * pp).
    tp, pp = 2, 2
    lay = Layout(dp=dp, tp=tp, pp=pp, order=parse_order("megatron-5d"), cp=cp, ep=ep)
    edp = dp * cp // ep
    sizes = {"tp": tp, "ep": ep, "dp": edp, "pp": pp}
    for ours, theirs in (("ep", "ep"), ("edp", "dp"), ("etp", "tp"), ("pp", "pp")):
        assert sorted(lay.groups(ours)) == megatron_groups(sizes, "tp-ep-dp-pp", theirs)
    # Every EP group lies inside one pipeline stage and one TP rank: ep re-partitions dp x cp.
    for group in lay.groups("ep"):
        assert len({(lay.coord(r).pp, lay.coord(r).tp) for r in group}) == 1
    assert [lay.coord(r).ep for r in lay.group("ep", 0)] == list(range(ep))


def test_ep_that_does_not_divide_dp_cp_is_refused():
    with pytest.raises(ValueError, match="ep=3"):
        Layout(dp=2, tp=1, pp=1, cp=2, ep=3)
    assert mesh.fold_problem(("tp", "cp", "ep", "dp", "pp"), dict(dp=2, tp=1, pp=1, cp=2, ep=3))


def test_ep_with_pp_inside_dp_needs_ep_equal_cp():
    sizes = {"dp": 2, "tp": 1, "pp": 2, "cp": 2, "ep": 2}
    assert mesh.fold_problem(("tp", "pp", "dp"), sizes) is None  # ep = cp: same grids
    assert mesh.fold_problem(("tp", "pp", "dp"), {**sizes, "cp": 1}) == "pipeline"
    assert mesh.fold_problem(("tp", "dp", "pp"), {**sizes, "cp": 1}) is None


def test_nodes_spanned_of_cp_and_ep():
    lay = Layout(dp=2, tp=4, pp=1, order=parse_order("megatron-5d"), gpus_per_node=8, cp=2, ep=4)
    assert not lay.crosses_node("cp")  # cp stride 4, span 4: inside a node of 8
    assert lay.crosses_node("ep")  # ep stride 4 over 4 members: ranks 0, 4, 8, 12
    rows = orders.compare(dp=2, tp=4, pp=1, gpus_per_node=8, cp=2, ep=4)
    mine = next(r for r in rows if r["order"] == "tp-cp-ep-pp-dp")
    assert mine["nodes_spanned"] == {"tp": 1, "cp": 1, "pp": 1, "dp": 2, "ep": 2}


def test_orders_table_with_cp_has_the_24_orders_and_names_megatron():
    rows = orders.compare(dp=2, tp=2, pp=2, gpus_per_node=4, cp=2)
    assert len(rows) == 24
    assert {r["order"] for r in rows} == {
        "-".join(p) for p in permutations(("tp", "cp", "pp", "dp"))
    }
    megatron = next(r for r in rows if r["order"] == "tp-cp-dp-pp")
    assert {"megatron", "megatron-5d"} <= set(megatron["presets"])
    for r in rows:  # the shortcut in _nodes_spanned agrees with the layout's own crossings
        lay = Layout(dp=2, tp=2, pp=2, order=tuple(r["order"].split("-")), gpus_per_node=4, cp=2)
        assert r["crosses_node"] == {a: lay.crosses_node(a) for a in r["crosses_node"]}


def test_orders_table_in_3d_is_unchanged():
    rows = orders.compare(dp=2, tp=2, pp=2, gpus_per_node=4)
    assert len(rows) == 6 and all(set(r["nodes_spanned"]) == set(AXES) for r in rows)
    assert next(r for r in rows if r["order"] == "tp-dp-pp")["presets"] == [
        "deepspeed", "megatron", "torchtitan",
    ]  # fmt: skip


def test_order_strings_accept_cp_and_ep_and_refuse_others():
    assert parse_order("tp-cp-dp-pp") == ("tp", "cp", "dp", "pp")
    assert ORDER_PRESETS["megatron-5d"] == parse_order("tp-cp-ep-dp-pp")
    for bad in ("tp-cp-pp", "tp-cp-cp-dp-pp", "tp-xp-dp-pp"):
        with pytest.raises(ValueError):
            parse_order(bad)
