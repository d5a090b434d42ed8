"""Rank layout: the article's demo reproduced exactly, and invariants for every order."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.layout.topology import AXES, ORDER_PRESETS, Layout, parse_order, seed_active_ranks


class SeedParallelConfig:
    """The article's ParallelConfig demo, transcribed from shared/seed line for line."""

    def __init__(self, dp, tp, pp):
        self.dp, self.tp, self.pp = dp, tp, pp
        self.total_gpus = dp * tp * pp

    def rank_to_coord(self, rank):
        tp = rank % self.tp
        pp = (rank // self.tp) % self.pp
        dp = rank // (self.tp * self.pp)
        return (dp, pp, tp)

    def allreduce_group(self, rank):
        c = self.rank_to_coord(rank)
        return [d * self.tp * self.pp + c[1] * self.tp + c[2] for d in range(self.dp)]

    def pp_downstream(self, rank):
        c = self.rank_to_coord(rank)
        if c[1] == self.pp - 1:
            return None
        return c[0] * self.tp * self.pp + (c[1] + 1) * self.tp + c[2]

    def active(self, num_microbatches):
        return [
            [
                r
                for r in range(self.total_gpus)
                if 0 <= t - self.rank_to_coord(r)[1] < num_microbatches
            ]
            for t in range(num_microbatches + self.pp - 1)
        ]


def test_seed_demo_dp2_tp2_pp2_is_reproduced_exactly():
    seed, layout = SeedParallelConfig(2, 2, 2), Layout(dp=2, tp=2, pp=2)
    for r in range(8):
        c = layout.coord(r)
        assert (c.dp, c.pp, c.tp) == seed.rank_to_coord(r)
        assert layout.allreduce_group(r) == seed.allreduce_group(r)
        assert layout.pp_downstream(r) == seed.pp_downstream(r)
    assert seed_active_ranks(layout, 4) == seed.active(4)


def test_seed_demo_printed_values():
    # What the article prints for GPU5 and time step 1.
    layout = Layout(dp=2, tp=2, pp=2)
    assert layout.coord(5).dp == 1 and layout.coord(5).pp == 0 and layout.coord(5).tp == 1
    assert layout.allreduce_group(5) == [1, 5]
    assert layout.pp_downstream(5) == 7
    assert layout.pp_downstream(7) is None
    assert seed_active_ranks(layout, 4)[1] == list(range(8))
    assert seed_active_ranks(layout, 4)[0] == [0, 1, 4, 5]


@pytest.mark.parametrize("dp,tp,pp", [(1, 1, 1), (3, 2, 4), (2, 4, 1), (4, 1, 3)])
def test_default_order_matches_the_article_formula(dp, tp, pp):
    seed, layout = SeedParallelConfig(dp, tp, pp), Layout(dp=dp, tp=tp, pp=pp)
    for r in range(dp * tp * pp):
        c = layout.coord(r)
        assert (c.dp, c.pp, c.tp) == seed.rank_to_coord(r)


def test_megatron_order_puts_dp_inside_pp():
    layout = Layout(dp=2, tp=2, pp=2, order=parse_order("megatron"))
    assert layout.group("tp", 0) == [0, 1]
    assert layout.group("dp", 0) == [0, 2]
    assert layout.group("pp", 0) == [0, 4]


def test_crosses_node_follows_the_order():
    # 2 nodes of 4: with tp-pp-dp, DP pairs sit 4 apart and cross; with tp-dp-pp, PP crosses.
    article = Layout(dp=2, tp=2, pp=2, gpus_per_node=4)
    megatron = Layout(dp=2, tp=2, pp=2, order=parse_order("tp-dp-pp"), gpus_per_node=4)
    assert (article.crosses_node("tp"), article.crosses_node("pp"), article.crosses_node("dp")) == (
        False,
        False,
        True,
    )
    assert (megatron.crosses_node("pp"), megatron.crosses_node("dp")) == (True, False)


def test_bad_orders_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="permutation"):
        parse_order("tp-tp-dp")
    with pytest.raises(ValueError, match="permutation"):
        parse_order("nonsense")
    assert parse_order("picotron") == ("tp", "pp", "dp")
    assert set(ORDER_PRESETS) >= {"megatron", "deepspeed", "torchtitan", "picotron"}


def test_sizes_below_one_are_refused():
    with pytest.raises(ValueError, match="tp must be >= 1"):
        Layout(dp=1, tp=0, pp=1)


@given(
    dp=st.integers(1, 5),
    tp=st.integers(1, 5),
    pp=st.integers(1, 5),
    order=st.sampled_from(list(itertools.permutations(AXES))),
    gpn=st.integers(1, 9),
)
def test_every_rank_is_in_exactly_one_group_per_axis(dp, tp, pp, order, gpn):
    layout = Layout(dp=dp, tp=tp, pp=pp, order=order, gpus_per_node=gpn)
    world = layout.world_size
    seen = {layout.rank_of(c.dp, c.pp, c.tp) for c in map(layout.coord, range(world))}
    assert seen == set(range(world))
    for axis in AXES:
        groups = layout.groups(axis)
        members = [r for g in groups for r in g]
        assert sorted(members) == list(range(world))
        assert all(len(g) == layout.size(axis) for g in groups)
        for g in groups:
            coords = [layout.coord(r) for r in g]
            others = [a for a in AXES if a != axis]
            assert len({tuple(c.get(a) for a in others) for c in coords}) == 1
            assert [c.get(axis) for c in coords] == list(range(layout.size(axis)))
            assert layout.group(axis, g[-1]) == g
