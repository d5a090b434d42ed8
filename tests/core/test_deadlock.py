"""The deadlock dry run: built-in orders complete; broken ones name the action that hangs."""

import pytest

from app.core.schedules import (
    Action,
    ScheduleError,
    ScheduleName,
    build,
    chunks_per_rank,
    validate,
)
from app.core.schedules.deadlock import DeadlockError, Hang, OrderError, dry_run
from app.core.simulate import Durations, simulate

COSTS = Durations(f=1.0, b=1.0, w=0.5, p2p=0.1)


def _grid():
    for name in ScheduleName:
        for pp in range(1, 5):
            for m in range(1, 13):
                for v in (1, 2, 3):
                    try:
                        validate(name, pp, m, v)
                    except ScheduleError:
                        continue
                    yield name, pp, m, v


def test_every_built_in_order_passes_the_dry_run_over_a_grid():
    sizes = list(_grid())
    assert {name for name, *_ in sizes} == set(ScheduleName)  # each schedule is in the grid
    for name, pp, m, v in sizes:
        dry_run(name, build(name, pp, m, v), v)


def _swapped(name, pp, m, v, rank, i):
    actions = [list(row) for row in build(name, pp, m, v)]
    actions[rank][i], actions[rank][i + 1] = actions[rank][i + 1], actions[rank][i]
    return actions


SWAP_SIZES = [
    ("gpipe", 3, 3, 1), ("1f1b", 4, 6, 1), ("interleaved", 3, 6, 2), ("zb-h1", 3, 4, 1),
    ("zbv", 2, 4, 2), ("dualpipev", 3, 6, 2),
]  # fmt: skip


@pytest.mark.parametrize("name,pp,m,v", SWAP_SIZES)
def test_each_adjacent_swap_the_simulator_and_the_dry_run_agree_and_blame_the_moved_action(
    name, pp, m, v
):
    hung = 0
    for rank in range(pp):
        for i in range(len(build(name, pp, m, v)[rank]) - 1):
            actions = _swapped(name, pp, m, v, rank, i)
            try:
                dry_run(name, actions, v)
            except DeadlockError as exc:
                hung += 1
                moved = actions[rank][i].compact(chunks_per_rank(ScheduleName(name), v) > 1)
                assert (exc.hangs[0].rank, exc.hangs[0].action) == (rank, moved)
                with pytest.raises(DeadlockError) as sim:
                    simulate(name, actions, COSTS, v)
                assert sim.value.hangs == exc.hangs
            else:
                simulate(name, actions, COSTS, v)  # completes, as the dry run said
    assert hung > 0


def test_a_chunk_placed_before_the_one_feeding_it_is_reported_with_what_it_waits_for():
    actions = build("interleaved", 2, 2, 2)
    assert actions[1][:3] == [Action("F", 0, 0), Action("F", 1, 0), Action("F", 0, 1)]
    actions[1][0], actions[1][2] = actions[1][2], actions[1][0]  # rank 1: F0c1 before F0c0
    with pytest.raises(DeadlockError) as exc:
        dry_run("interleaved", actions, 2)
    first = exc.value.hangs[0]
    assert first == Hang(1, "F0c1", "F0c1 from rank 0",
                         ", which waits on F0c0 that this rank runs only after F0c1")  # fmt: skip
    assert [h.rank for h in exc.value.hangs] == [1, 0]
    assert "rank 1: F0c1 waits for F0c1 from rank 0" in str(exc.value)


def test_a_backward_before_its_own_forward_hangs_on_that_rank():
    actions = build("1f1b", 4, 8)
    actions[3][0], actions[3][1] = actions[3][1], actions[3][0]  # last rank: B0 then F0
    with pytest.raises(DeadlockError) as exc:
        simulate("1f1b", actions, COSTS)
    assert str(exc.value.hangs[0]) == "rank 3: B0 waits for F0, which this rank runs only later"
    assert exc.value.field == "schedule" and isinstance(exc.value, ScheduleError)


def test_an_order_cycle_through_two_ranks_blames_the_first_rank_in_it():
    # gpipe p=3, m=3 with rank 1 running B0 before F2: rank 2 needs F2 before its B0.
    actions = build("gpipe", 3, 3)
    actions[1].remove(Action("B", 0))
    actions[1].insert(2, Action("B", 0))
    with pytest.raises(DeadlockError) as exc:
        dry_run("gpipe", actions, 1)
    first = exc.value.hangs[0]
    assert (first.rank, first.action, first.waits_for) == (1, "B0", "B0 from rank 2")
    assert "this rank runs only after B0" in first.why


def test_a_pair_schedule_run_out_of_its_own_order_is_refused_not_drawn():
    # DualPipeV compiles same-rank inputs as done; the dry run catches a W before its B.
    actions = build("dualpipev", 2, 4, 2)
    row = actions[0]
    b = next(i for i, a in enumerate(row) if a.kind == "B")
    w = row.index(Action("W", row[b].microbatch, row[b].chunk))
    row.insert(b, row.pop(w))
    with pytest.raises(DeadlockError) as exc:
        simulate("dualpipev", actions, COSTS, 2)
    assert exc.value.hangs[0].rank == 0 and exc.value.hangs[0].action.startswith("W")


def test_a_send_nobody_receives_is_an_order_error_naming_both_ranks():
    actions = build("1f1b", 3, 4)
    actions[1] = [a for a in actions[1] if a.microbatch != 2]  # rank 1 drops micro-batch 2
    with pytest.raises(OrderError, match="rank 0: F2 sends to rank 1, which never runs F2"):
        dry_run("1f1b", actions, 1)


def test_a_duplicate_or_a_chunk_the_rank_lacks_is_refused_by_the_simulator_too():
    twice = build("gpipe", 2, 2)
    twice[1].insert(0, Action("F", 0))
    with pytest.raises(OrderError, match="rank 1's action 1 .* is listed twice"):
        simulate("gpipe", twice, COSTS)
    far = build("gpipe", 2, 2)
    far[0][0] = Action("F", 0, 3)
    with pytest.raises(OrderError, match="needs 0 <= chunk < 1"):
        simulate("gpipe", far, COSTS)
