"""Bounded fan-out of a run's live items to every viewer of that run.

A producer never waits for a viewer: ``publish`` appends the item to the run's pending list
and returns. Every tick (~100 ms) the hub turns each run's pending items into one frame,
serialised once and shared by every viewer, and offers it to each viewer's bounded queue.
An item is serialised only there, for a run that has viewers at that tick: encoding every
stored record's item when it was published was ~10 us a record of a 1,024-rank run's
ingest, viewers or not (issue 26 item 11), and a run nobody watches is most of them.

* a full queue drops its oldest frame and remembers the gap (sequence numbers and the
  first step in it), so the viewer is told exactly what it missed and can refetch;
* a viewer that has taken nothing for ``kick_after_s`` while frames waited for it is
  disconnected: its socket is not draining, and holding frames for it forever would grow
  the server's memory. The clock starts at the first frame it did not take (a healthy
  viewer takes each tick's frame within the tick), not when its queue is full: that added
  the 3.2 s a 32-frame queue takes to fill at 10 ticks a second. What comes before the
  first untaken frame is the socket's buffers filling (app/live/transport.py caps them).

Frames are shared strings, so a stalled viewer costs at most ``capacity`` references.
Each message a viewer receives is a JSON array: an optional ``gap`` notice, then batches.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

SHUTDOWN = "server shutting down"
log = logging.getLogger("meshscope.live")


@dataclass(frozen=True)
class Frame:
    first: int  # sequence number of its first item
    last: int
    first_step: int | None  # the smallest step among its items, for the gap notice
    text: str
    message: str  # "[text]": what a caught-up viewer is sent, built once for all of them


class Viewer:
    """One viewer's queue: bounded, drop-oldest, with a pending gap notice."""

    def __init__(self, run: str, capacity: int) -> None:
        self.run, self.capacity = run, capacity
        self.frames: deque[Frame] = deque()
        self.wake = asyncio.Event()
        self.closed = asyncio.Event()
        self.reason = ""
        self.gap: list | None = None  # [first seq, last seq, first step, frames]
        self.waiting_since: float | None = None  # clock() of the oldest frame not yet taken
        self.dropped = 0
        self.on_kick: Callable[[], object] | None = None

    def offer(self, frame: Frame, now: float) -> int:
        """Queue one frame; returns how many were dropped to make room (0 or 1)."""
        dropped = 0
        if len(self.frames) >= self.capacity:
            self._note_gap(self.frames.popleft())
            dropped = 1
        self.frames.append(frame)
        if self.waiting_since is None:
            self.waiting_since = now
        self.wake.set()
        return dropped

    def _note_gap(self, old: Frame) -> None:
        self.dropped += 1
        if self.gap is None:
            self.gap = [old.first, old.last, old.first_step, 1]
            return
        g = self.gap
        steps = [s for s in (g[2], old.first_step) if s is not None]
        self.gap = [min(g[0], old.first), max(g[1], old.last), min(steps, default=None), g[3] + 1]

    def take(self) -> str | None:
        """Everything queued as one message (gap notice first), or None when empty."""
        if self.gap is None and len(self.frames) == 1:  # the common case: no copy per viewer
            self.waiting_since = None
            self.wake.clear()
            return self.frames.popleft().message
        parts = []
        if self.gap is not None:
            first, last, step, n = self.gap
            notice = {"type": "gap", "from": first, "to": last, "first_step": step, "frames": n}
            parts.append(json.dumps(notice))
            self.gap = None
        while self.frames:
            parts.append(self.frames.popleft().text)
        self.waiting_since = None
        self.wake.clear()
        return "[" + ",".join(parts) + "]" if parts else None

    def kick(self, reason: str) -> None:
        self.reason = reason
        self.closed.set()
        self.wake.set()
        if self.on_kick is not None:
            self.on_kick()  # cancels a send stuck on a socket that does not drain


def _encoded(item: dict) -> str:
    """The item's JSON, or "" for one JSON cannot hold (a NaN): left out and logged, as
    ``publish`` once refused it alone, not raised, which would lose the tick's every item."""
    try:
        return json.dumps(item, allow_nan=False)
    except (TypeError, ValueError):
        log.exception("a live item could not be encoded: left out")
        return ""


class Hub:
    def __init__(
        self,
        tick_s: float = 0.1,
        capacity: int = 32,
        kick_after_s: float = 3.0,
        max_viewers: int = 2048,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tick_s, self.capacity, self.kick_after_s = tick_s, capacity, kick_after_s
        self.max_viewers, self.clock = max_viewers, clock
        self._viewers: dict[str, set[Viewer]] = {}
        self._pending: dict[str, list[tuple[dict, int | None]]] = {}
        self._seq: dict[str, int] = {}
        self.published = self.frames = self.dropped = self.kicked = 0

    @property
    def viewers(self) -> int:
        return sum(len(v) for v in self._viewers.values())

    def viewers_of(self, run: str) -> int:
        return len(self._viewers.get(run, ()))

    def seq(self, run: str) -> int:
        """The sequence number of the run's last published item (0: none yet)."""
        return self._seq.get(run, 0)

    def subscribe(self, run: str) -> Viewer | None:
        """A new viewer, or None when the server already serves ``max_viewers``."""
        if self.viewers >= self.max_viewers:
            return None
        viewer = Viewer(run, self.capacity)
        self._viewers.setdefault(run, set()).add(viewer)
        return viewer

    def unsubscribe(self, viewer: Viewer) -> None:
        group = self._viewers.get(viewer.run)
        if group is not None:
            group.discard(viewer)
            if not group:
                del self._viewers[viewer.run]

    def publish(self, run: str, item: dict, step: int | None = None) -> None:
        """Never blocks: the item waits for the next tick (the caller hands it over: it is
        encoded then, so it must not change after this)."""
        self._seq[run] = self._seq.get(run, 0) + 1
        self._pending.setdefault(run, []).append((item, step))
        self.published += 1

    def tick(self) -> None:
        """Flush every run's pending items into one shared frame; cut off stuck viewers."""
        now = self.clock()
        pending, self._pending = self._pending, {}
        for run, items in pending.items():
            viewers = self._viewers.get(run)
            if not viewers:
                continue
            frame = self._frame(run, items)
            self.frames += 1
            for viewer in list(viewers):
                self.dropped += viewer.offer(frame, now)
        for group in list(self._viewers.values()):
            for viewer in list(group):
                since = viewer.waiting_since
                if since is not None and now - since > self.kick_after_s:
                    self.kicked += 1
                    viewer.kick(f"queue full or undrained for over {self.kick_after_s:g} s")
                    self.unsubscribe(viewer)

    def _frame(self, run: str, items: list[tuple[dict, int | None]]) -> Frame:
        last = self._seq[run]
        first = last - len(items) + 1
        steps = [s for _, s in items if s is not None]
        head = f'{{"type":"batch","from":{first},"to":{last},"items":['
        text = head + ",".join(t for t in (_encoded(i) for i, _ in items) if t) + "]}"
        return Frame(first, last, min(steps, default=None), text, "[" + text + "]")

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            self.tick()

    def close(self) -> None:
        """Shutdown: every viewer's handler returns promptly."""
        for group in list(self._viewers.values()):
            for viewer in list(group):
                viewer.kick(SHUTDOWN)
        self._viewers.clear()
