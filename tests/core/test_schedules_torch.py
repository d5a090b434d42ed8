"""looped-bfs and interleaved-zb: torch 2.13's orders action for action, and torch's size rule."""

import pytest
from test_schedules import _accepts, _ours, _torch_ops

from app.core.schedules import Action, ScheduleError, build, chunks_per_rank
from app.core.simulate import Durations, simulate

TORCH_NAME = {"looped-bfs": "LoopedBFS", "interleaved-zb": "InterleavedZeroBubble"}
GRID = [(p, m, v) for p in range(1, 6) for m in range(1, 13) for v in (2, 3)]
GRID += [(8, 16, 2), (4, 32, 4), (6, 9, 2), (8, 12, 3)]


def _theirs_or_none(name: str, pp: int, m: int, v: int):
    try:
        return _torch_ops(TORCH_NAME[name], pp, m, v)
    except ValueError:  # torch refuses the size
        return None


@pytest.mark.parametrize("name", sorted(TORCH_NAME))
def test_orders_equal_torchs_and_refusals_match_over_the_grid(name):
    pytest.importorskip("torch.distributed.pipelining")
    equal = refused = 0
    for pp, m, v in GRID:
        theirs = _theirs_or_none(name, pp, m, v)
        ours = _ours(name, pp, m, v) if _accepts(name, pp, m, v) else None
        assert ours == theirs, (name, pp, m, v)
        equal, refused = equal + (ours is not None), refused + (ours is None)
    # looped-bfs runs every size; interleaved-zb refuses those torch's rounds do not divide.
    assert equal + refused == len(GRID) and equal > 0
    assert (refused == 0) == (name == "looped-bfs")


@pytest.mark.parametrize("name", sorted(TORCH_NAME))
def test_one_chunk_per_rank_is_refused_naming_virtual_stages(name):
    with pytest.raises(ScheduleError) as err:
        build(name, 4, 8, 1)
    assert err.value.field == "virtual_stages"


def test_interleaved_zb_refuses_like_torch_naming_microbatches_and_its_rule():
    with pytest.raises(ScheduleError, match=r"max\(1, microbatches // pp\) = 2 rounds") as err:
        build("interleaved-zb", 4, 9, 2)
    assert err.value.field == "microbatches"
    with pytest.raises(ValueError, match="multiple of the number of rounds"):
        _torch_ops("InterleavedZeroBubble", 4, 9, 2)


@pytest.mark.parametrize("name,pp,m,v", [("looped-bfs", 4, 8, 2), ("interleaved-zb", 4, 10, 3)])
def test_each_action_once_and_the_order_completes_with_uneven_costs(name, pp, m, v):
    actions = build(name, pp, m, v)
    kinds = "FBW" if name == "interleaved-zb" else "FB"
    expected = {Action(k, i, c) for k in kinds for i in range(m) for c in range(v)}
    assert chunks_per_rank(name, v) == v
    for row in actions:
        assert len(row) == len(expected) and set(row) == expected
    t = simulate(name, actions, Durations(1.0, 2.0, 0.5, 0.3), v)
    assert len(t.events) == len(expected) * pp


def test_looped_bfs_holds_every_chunk_micro_batch_like_gpipe():
    # Breadth-first: all forwards of all chunks before the first backward.
    t = simulate("looped-bfs", build("looped-bfs", 4, 8, 2), Durations(1, 1, 0, 0), 2)
    assert t.peak_inflight == [16] * 4


def test_interleaved_zb_fills_interleaved_1f1bs_bubble_with_w():
    # Same F/B rhythm, the W's deferred into the drain: shorter than the whole backward's.
    d = Durations(1.0, 1.0, 1.0, 0.0)
    zb = simulate("interleaved-zb", build("interleaved-zb", 4, 8, 2), d, 2)
    one = simulate("interleaved", build("interleaved", 4, 8, 2), d, 2)
    assert zb.makespan < one.makespan
    assert max(zb.busy) == max(one.busy) == 3 * 8 * 2
