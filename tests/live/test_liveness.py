"""Liveness: silent for 3 heartbeat intervals -> stale; silent and disconnected -> dead and
the run failed at its last event; every rank at its final step -> done; a resume revives."""

from app.live.liveness import Liveness


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _live(clock):
    return Liveness(heartbeat_s=5.0, stale_after_beats=3, clock=clock, wall=lambda: 9999.0)


def test_a_silent_connected_rank_is_stale_and_recovers_when_it_speaks():
    clock = Clock()
    live = _live(clock)
    live.watch("r", world=2, steps=10)
    live.connected("r", 0, False)
    live.connected("r", 1, False)
    clock.t = 10.0
    live.seen("r", 1)
    assert live.sweep() == []
    clock.t = 15.0
    (change,) = live.sweep()
    assert change.status == "stale" and change.ranks == {0: "stale", 1: "live"}
    live.seen("r", 0)
    (change,) = live.sweep()
    assert change.status == "running"


def test_a_dead_rank_fails_the_run_at_its_last_event():
    clock = Clock()
    live = _live(clock)
    live.watch("r", world=2, steps=10)
    for rank in (0, 1):
        live.connected("r", rank, False)
        live.stored("r", rank, 3, event_end_wall=500.0 + rank)
    live.disconnected("r", 1)
    clock.t = 14.0
    live.seen("r", 0)
    clock.t = 16.0
    (change,) = live.sweep()
    assert change.status == "failed" and change.failed_at == 501.0
    assert "rank(s) 1 stopped reporting" in change.reason
    live.connected("r", 1, attempt_restarted=True)  # the resumed attempt says hello
    (change,) = live.sweep()
    assert change.status == "running" and change.failed_at is None


def test_every_rank_at_its_final_step_is_done_and_unwatched():
    clock = Clock()
    live = _live(clock)
    live.watch("r", world=2, steps=3)
    for rank in (0, 1):
        live.connected("r", rank, False)
        live.stored("r", rank, 2, 10.0)
        live.disconnected("r", rank)
    clock.t = 100.0  # long silent, but finished: done, not dead
    (change,) = live.sweep()
    assert change.status == "done" and "r" not in live.runs


def test_a_rank_that_never_connects_makes_the_run_stale():
    clock = Clock()
    live = _live(clock)
    live.watch("r", world=2, steps=10)
    live.connected("r", 0, False)
    clock.t = 16.0
    live.seen("r", 0)
    (change,) = live.sweep()
    assert change.status == "stale" and change.ranks[1] == "missing"


def test_a_restarted_server_gives_ranks_a_fresh_grace_period():
    clock = Clock()
    clock.t = 1000.0
    live = _live(clock)
    live.watch("r", world=2, steps=10, done_ranks=[1], last_event=42.0)
    clock.t = 1010.0
    assert live.sweep() == []  # nobody reconnected yet, but 10 s < 15 s
    clock.t = 1016.0
    (change,) = live.sweep()
    assert change.status == "stale" and change.ranks == {0: "missing", 1: "done"}
