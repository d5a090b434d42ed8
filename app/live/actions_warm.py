"""A run's action segments caught up in the background once the run stops reporting, so its
first whole-run question is answered from them.

An import stores its run and warms its segments itself (Segments.warm); a run that arrives
over /ws/ingest (the probe, ``meshscope upload``, ``import-trace --server``) was caught up
only by its first whole-run query: 16 s at 1,024 ranks x 100 steps (bench/bench_actions.py)
where the issue asks for under 1 s. A live run is left lazy: its rows keep coming, and
catching up while they do is the same work done in more pieces. One run at a time, in a
thread: DuckDB's JSON reader and Parquet writer do the work outside the GIL."""

from __future__ import annotations

import asyncio

from app.live.actions_segments import Segments

# The statuses after which a run's rows stop growing (app/live/liveness.py's _status),
# short of a resume, which the next query catches up.
STOPPED = frozenset({"done", "incomplete", "failed"})


class Warmer:
    def __init__(self, segments: Segments) -> None:
        self.segments = segments
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._wanted: set[str] = set()

    def stopped(self, run: str, status: str) -> None:
        """A run's status changed: queue its catch-up when it is one of STOPPED."""
        if status in STOPPED and run not in self._wanted:
            self._wanted.add(run)
            self._queue.put_nowait(run)

    async def run(self) -> None:
        while True:
            run = await self._queue.get()
            try:
                await asyncio.to_thread(self.segments.warm, run)  # logs its own failures
            finally:
                self._wanted.discard(run)
