"""The hub encodes a live item only at its tick and only for a run that has viewers then
(issue 26 item 11: every stored record's item was encoded when published, watched or not),
and a viewer still receives exactly what it did: the items in order, with their sequence
numbers, including ones published before it subscribed within the same tick."""

from __future__ import annotations

import asyncio
import json

from app.live import hub as hub_module
from app.live.hub import Hub


class _CountingJson:
    """json as the hub uses it, counting the items encoded."""

    def __init__(self) -> None:
        self.encoded = 0

    def dumps(self, value, **kw):
        self.encoded += 1
        return json.dumps(value, **kw)


def _hub(monkeypatch) -> tuple[Hub, _CountingJson]:
    counting = _CountingJson()
    monkeypatch.setattr(hub_module, "json", counting)
    return Hub(clock=lambda: 0.0), counting


def test_a_run_without_viewers_costs_no_encoding(monkeypatch):
    async def go():
        hub, counting = _hub(monkeypatch)
        hub.subscribe("watched")
        for step in range(50):
            hub.publish("unwatched", {"type": "record", "step": step}, step)
        hub.tick()
        assert counting.encoded == 0 and hub.seq("unwatched") == 50 and hub.frames == 0

    asyncio.run(go())


def test_a_viewer_receives_the_items_in_order_with_their_numbers(monkeypatch):
    async def go():
        hub, counting = _hub(monkeypatch)
        hub.publish("a", {"type": "record", "step": 0, "loss": 1.5}, 0)  # before it subscribed
        v = hub.subscribe("a")
        hub.publish("a", {"type": "step", "step": 0, "step_time_s": 0.25}, 0)
        hub.tick()
        (frame,) = json.loads(v.take())
        assert frame == {
            "type": "batch", "from": 1, "to": 2,
            "items": [{"type": "record", "step": 0, "loss": 1.5},
                      {"type": "step", "step": 0, "step_time_s": 0.25}],
        }  # fmt: skip
        assert counting.encoded == 2  # each item once, for however many viewers

    asyncio.run(go())


def test_an_item_json_cannot_hold_is_left_out_alone(monkeypatch):
    async def go():
        hub, _ = _hub(monkeypatch)
        v = hub.subscribe("a")
        hub.publish("a", {"type": "record", "step": 0, "loss": float("nan")}, 0)
        hub.publish("a", {"type": "record", "step": 1}, 1)
        hub.tick()
        (frame,) = json.loads(v.take())
        assert frame["items"] == [{"type": "record", "step": 1}] and frame["to"] == 2

    asyncio.run(go())
