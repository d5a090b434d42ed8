"""Which ranks are alive, and what that makes each run: running, stale, failed or done.

A rank is *stale* when it has been silent (no record, heartbeat or hello) for
``stale_after_beats`` heartbeat intervals, and *dead* when it is that silent with no open
connection: its reporter is gone, not just slow. A run with a dead rank is *failed*, dated
at its last event (the latest ``t0 + step time`` any rank reported); a run every rank of
which has stored its final step is *done*. A failed run comes back to running when its
ranks speak again (a resume from a checkpoint says hello with a higher attempt).

Clocks are injected: ``clock`` (monotonic) measures silence, ``wall`` dates what we report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class RankState:
    last_seen: float  # clock()
    connections: int = 0
    done: bool = False
    last_event_wall: float | None = None


@dataclass
class RunState:
    world: int
    final_step: int  # steps - 1: the step after which a rank is done
    started: float  # clock() when we began watching: a rank never seen counts from here
    ranks: dict[int, RankState] = field(default_factory=dict)
    status: str = "running"
    failed_at: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class Change:
    run: str
    status: str
    failed_at: float | None
    reason: str
    ranks: dict[int, str]  # rank -> live | stale | dead | done | missing


class Liveness:
    def __init__(
        self,
        heartbeat_s: float = 5.0,
        stale_after_beats: int = 3,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.silence_s = heartbeat_s * stale_after_beats
        self.clock, self.wall = clock, wall
        self.runs: dict[str, RunState] = {}

    def watch(self, run: str, world: int, steps: int, done_ranks=(), last_event=None) -> None:
        """Start (or keep) watching a run; a restarted server calls it for unfinished runs."""
        state = self.runs.get(run)
        if state is None:
            state = self.runs[run] = RunState(world, steps - 1, self.clock())
        state.world, state.final_step = world, max(state.final_step, steps - 1)
        for rank in done_ranks:
            self._rank(state, rank).done = True
        if last_event is not None:
            for r in state.ranks.values():
                r.last_event_wall = max(r.last_event_wall or 0.0, last_event)

    def _rank(self, state: RunState, rank: int) -> RankState:
        if rank not in state.ranks:
            state.ranks[rank] = RankState(last_seen=self.clock())
        return state.ranks[rank]

    def seen(self, run: str, rank: int) -> None:
        state = self.runs.get(run)
        if state is not None:
            self._rank(state, rank).last_seen = self.clock()

    def connected(self, run: str, rank: int, attempt_restarted: bool) -> None:
        state = self.runs[run]
        r = self._rank(state, rank)
        r.connections += 1
        r.last_seen = self.clock()
        if attempt_restarted:  # a resumed attempt re-runs steps: not done any more
            r.done = False

    def disconnected(self, run: str, rank: int) -> None:
        state = self.runs.get(run)
        if state is not None and rank in state.ranks:
            r = state.ranks[rank]
            r.connections = max(r.connections - 1, 0)
            r.last_seen = self.clock()

    def stored(self, run: str, rank: int, step: int, event_end_wall: float) -> None:
        state = self.runs.get(run)
        if state is None:
            return
        r = self._rank(state, rank)
        r.last_seen = self.clock()
        r.last_event_wall = max(r.last_event_wall or 0.0, event_end_wall)
        if step >= state.final_step:
            r.done = True

    def rank_states(self, state: RunState) -> dict[int, str]:
        now, out = self.clock(), {}
        for rank in range(state.world):
            r = state.ranks.get(rank)
            if r is not None and r.done:
                out[rank] = "done"
            elif r is None:
                out[rank] = "missing" if now - state.started >= self.silence_s else "live"
            elif now - r.last_seen < self.silence_s:
                out[rank] = "live"
            else:
                out[rank] = "stale" if r.connections else "dead"
        return out

    def sweep(self) -> list[Change]:
        """Recompute every run's status; return the runs whose status or ranks changed."""
        changes = []
        for run, state in self.runs.items():
            ranks = self.rank_states(state)
            status, reason = self._status(ranks)
            failed_at = state.failed_at
            if status == "failed" and state.status != "failed":
                ends = [r.last_event_wall for r in state.ranks.values() if r.last_event_wall]
                failed_at = max(ends) if ends else self.wall()
            elif status != "failed":
                failed_at = None
            if (status, reason, failed_at) != (state.status, state.reason, state.failed_at):
                state.status, state.reason, state.failed_at = status, reason, failed_at
                changes.append(Change(run, status, failed_at, reason, ranks))
        for change in changes:
            if change.status == "done":
                del self.runs[change.run]  # nothing left to watch
        return changes

    @staticmethod
    def _status(ranks: dict[int, str]) -> tuple[str, str]:
        by_state: dict[str, list[int]] = {}
        for rank, s in ranks.items():
            by_state.setdefault(s, []).append(rank)
        if "dead" in by_state:
            return "failed", f"rank(s) {_ranks(by_state['dead'])} stopped reporting"
        stale = by_state.get("stale", []) + by_state.get("missing", [])
        if stale:
            return "stale", f"rank(s) {_ranks(sorted(stale))} silent"
        if ranks and len(by_state.get("done", [])) == len(ranks):
            return "done", ""
        return "running", ""

    def snapshot(self, run: str) -> dict[int, str] | None:
        state = self.runs.get(run)
        return None if state is None else self.rank_states(state)


def _ranks(ranks: list[int], limit: int = 8) -> str:
    shown = ", ".join(str(r) for r in ranks[:limit])
    return shown + (f" and {len(ranks) - limit} more" if len(ranks) > limit else "")
