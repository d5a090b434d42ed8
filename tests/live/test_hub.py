"""The hub: one shared frame per tick, drop-oldest with an exact gap notice, and a viewer
that stays full is cut off while the others keep everything."""

import asyncio
import json

from app.live.hub import Hub


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _messages(viewer) -> list:
    text = viewer.take()
    return [] if text is None else json.loads(text)


def test_items_of_one_tick_coalesce_into_one_frame_in_order():
    async def go():
        hub = Hub(capacity=4, clock=Clock())
        v = hub.subscribe("a")
        for step in range(5):
            hub.publish("a", {"type": "record", "step": step}, step)
        hub.tick()
        (frame,) = _messages(v)
        assert (frame["from"], frame["to"]) == (1, 5)
        assert [i["step"] for i in frame["items"]] == [0, 1, 2, 3, 4]
        assert hub.frames == 1

    asyncio.run(go())


def test_other_runs_are_not_sent_and_a_run_without_viewers_costs_nothing():
    async def go():
        hub = Hub(clock=Clock())
        v = hub.subscribe("a")
        hub.publish("b", {"type": "record"}, 0)
        hub.tick()
        assert v.take() is None and hub.frames == 0

    asyncio.run(go())


def test_a_full_queue_drops_the_oldest_and_says_exactly_what_was_lost():
    async def go():
        clock = Clock()
        hub = Hub(capacity=3, kick_after_s=100, clock=clock)
        v = hub.subscribe("a")
        for step in range(5):  # 5 ticks, one item each, into a queue of 3
            hub.publish("a", {"type": "record", "step": step}, step)
            hub.tick()
        gap, *batches = _messages(v)
        assert gap == {"type": "gap", "from": 1, "to": 2, "first_step": 0, "frames": 2}
        assert [b["from"] for b in batches] == [3, 4, 5]
        assert hub.dropped == 2 and v.take() is None

    asyncio.run(go())


def test_a_viewer_full_for_longer_than_the_limit_is_kicked_and_others_keep_all():
    async def go():
        clock = Clock()
        hub = Hub(capacity=2, kick_after_s=3.0, clock=clock)
        stuck, healthy = hub.subscribe("a"), hub.subscribe("a")
        kicked = []
        stuck.on_kick = lambda: kicked.append(True)
        received = []
        for step in range(50):
            clock.t = step * 0.1
            hub.publish("a", {"type": "record", "step": step}, step)
            hub.tick()
            for frame in _messages(healthy):
                received += [i["step"] for i in frame["items"]]
        assert stuck.closed.is_set() and kicked == [True] and hub.kicked == 1
        assert "queue full" in stuck.reason
        assert received == list(range(50))
        assert hub.viewers == 1

    asyncio.run(go())


def test_a_slow_but_moving_viewer_is_not_kicked():
    async def go():
        clock = Clock()
        hub = Hub(capacity=2, kick_after_s=1.0, clock=clock)
        v = hub.subscribe("a")
        for step in range(40):
            clock.t = step * 0.1
            hub.publish("a", {"type": "record", "step": step}, step)
            hub.tick()
            if step % 5 == 0:
                v.take()  # reads twice a second: drops frames, but drains
        assert not v.closed.is_set() and hub.dropped > 0

    asyncio.run(go())


def test_close_ends_every_viewer():
    async def go():
        hub = Hub(clock=Clock())
        viewers = [hub.subscribe("a"), hub.subscribe("b")]
        hub.close()
        assert all(v.closed.is_set() for v in viewers) and hub.viewers == 0

    asyncio.run(go())


def test_the_viewer_cap_refuses_more():
    async def go():
        hub = Hub(max_viewers=2, clock=Clock())
        assert hub.subscribe("a") and hub.subscribe("a")
        assert hub.subscribe("a") is None

    asyncio.run(go())
