"""Liveness rules for a killed rank, a dead peer and a slow one, on an injected clock: a lost
connection is dead after a short grace (a reconnect within it is not), missed short heartbeats
are dead with the connection still open, and a rank that beats but makes no progress is
stale, never dead."""

from app.live.liveness import Liveness


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _live(clock) -> Liveness:
    # The server's defaults: stale after 3 x 5 s; beating senders dead after 3 missed beats.
    return Liveness(heartbeat_s=5.0, stale_after_beats=3, clock=clock, wall=lambda: 1.0)


def _two_ranks(clock, beat_s=0.5) -> Liveness:
    live = _live(clock)
    live.watch("r", world=2, steps=100)
    for rank in (0, 1):
        live.connected("r", rank, False, heartbeat_s=beat_s)
        live.stored("r", rank, 0, 10.0)
    return live


def _beat(live, clock, until, ranks=(0, 1), every=0.5):
    while clock.t < until:
        clock.t = round(clock.t + every, 6)
        for rank in ranks:
            live.seen("r", rank)


def test_a_closed_connection_is_dead_after_the_grace_and_fails_the_run():
    clock = Clock()
    live = _two_ranks(clock)
    live.disconnected("r", 1)  # kill -9: the kernel closes its socket at once
    clock.t = 0.4
    assert live.sweep() == []  # within the grace: a reconnecting reporter would be back
    clock.t = 0.5
    (change,) = live.sweep()
    assert change.status == "failed" and change.ranks == {0: "live", 1: "dead"}
    assert change.reason == "rank(s) 1 stopped reporting"


def test_a_reconnect_within_the_grace_is_not_a_death():
    clock = Clock()
    live = _two_ranks(clock)
    live.disconnected("r", 1)
    clock.t = 0.3
    live.connected("r", 1, False, heartbeat_s=0.5)
    clock.t = 1.0
    assert live.sweep() == []


def test_missed_heartbeats_are_dead_with_the_connection_still_open():
    clock = Clock()
    live = _two_ranks(clock)
    _beat(live, clock, until=1.0, ranks=(0,))  # rank 1's peer vanished: no FIN, no beats
    assert live.sweep() == []  # 1.0 s < 3 beats
    _beat(live, clock, until=1.5, ranks=(0,))
    (change,) = live.sweep()
    assert change.status == "failed" and change.ranks[1] == "dead"


def test_a_rank_that_beats_but_makes_no_progress_is_stale_not_dead():
    clock = Clock()
    live = _two_ranks(clock)
    _beat(live, clock, until=14.5)
    assert live.sweep() == []
    _beat(live, clock, until=15.0)
    (change,) = live.sweep()
    assert change.status == "stale" and change.ranks == {0: "stale", 1: "stale"}
    live.stored("r", 0, 1, 20.0)
    live.stored("r", 1, 1, 20.0)
    (change,) = live.sweep()
    assert change.status == "running"


def test_a_rank_with_long_steps_is_stale_only_after_three_of_them():
    clock = Clock()
    live = _two_ranks(clock)
    for step in (1, 2):
        _beat(live, clock, until=clock.t + 20.0)  # 20 s steps, beating all along
        for rank in (0, 1):
            live.stored("r", rank, step, 30.0)
    _beat(live, clock, until=clock.t + 59.5)
    assert live.sweep() == []  # 59.5 s < 3 x 20 s
    _beat(live, clock, until=clock.t + 0.5)
    (change,) = live.sweep()
    assert change.status == "stale"


def test_an_ended_rank_leaves_the_run_incomplete_not_failed():
    clock = Clock()
    live = _two_ranks(clock)
    live.stored("r", 0, 99, 50.0)  # rank 0 finished and everything arrived
    live.ended("r", 1)  # rank 1 finished, its last records still in its spool
    live.disconnected("r", 0)
    live.disconnected("r", 1)
    clock.t = 30.0
    (change,) = live.sweep()
    assert change.status == "incomplete" and change.ranks == {0: "done", 1: "ended"}
    live.connected("r", 1, False)  # the upload says hello, then sends the rest
    live.stored("r", 1, 99, 50.0)
    (change,) = live.sweep()
    assert change.status == "done" and "r" not in live.runs


def test_an_older_sender_without_a_heartbeat_keeps_the_slow_rules():
    clock = Clock()
    live = _live(clock)
    live.watch("r", world=1, steps=10)
    live.connected("r", 0, False)  # no heartbeat_s in its hello
    clock.t = 14.0
    assert live.sweep() == []  # silent 14 s with a 5 s beat: still live
    clock.t = 15.0
    (change,) = live.sweep()
    assert change.status == "stale"
