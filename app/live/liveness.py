"""Which ranks are alive, and what that makes each run: running, stale, incomplete, failed
or done.

A rank is **dead** when its reporter is gone, seen three ways:

* its connection closed and no other opened within ``lost_grace_s`` (a kill -9 closes the
  socket at once; a reconnecting reporter is back within the grace);
* a sender that announced a heartbeat interval (``HelloFrame.heartbeat_s``) went silent for
  ``dead_after_beats`` of them: a dead TCP peer or a frozen process, connection still open;
* a sender that announced none (older probes) was silent for ``stale_after_beats`` default
  heartbeat intervals with no connection open.

A rank is **stale** when it is alive but not progressing: a beating sender with no new record
for ``stale_after_beats`` default intervals (or three of its own step intervals, if longer),
or an older sender silent that long with its connection open. A rank that said it **ended**
(``HeartbeatFrame.ended``) before its final step was stored is not dead: its records are
waiting in its spool, and the run is **incomplete** until ``meshscope upload`` sends them.
Unless its spool ends before the final step (the heartbeat's ``step``): that rank stopped
early (an upload of a failed run's spool says so), and the run stays **failed**.

A run with a dead rank is *failed*, dated at its last event (the latest ``t0 + step time``
any rank reported); a run every rank of which has stored its final step is *done*. A failed
run comes back to running when its ranks speak again (a resume says hello again).

Clocks are injected: ``clock`` (monotonic) measures silence, ``wall`` dates what we report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.live import event_text


@dataclass
class RankState:
    last_seen: float  # clock(): any frame
    last_progress: float  # clock(): the last stored record, or the (re)connection
    connections: int = 0
    done: bool = False
    ended: bool = False  # the sender said it stopped producing (records may be unsent)
    ended_step: int | None = None  # the last step its spool holds, as the sender said
    heartbeat_s: float | None = None  # announced by the sender; None: an older sender
    lost_at: float | None = None  # clock() when its last connection closed
    step_interval_s: float = 0.0  # between its last two stored records
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
    ranks: dict[int, str]  # rank -> live | stale | dead | ended | done | missing
    first_dead: int | None = None  # failed: the rank seen dead first (its socket closed or
    # its beats stopped earliest), the likeliest cause when records cannot tell
    said: tuple = ()  # the reason keyed (event_text.reason), for a page in another language


class Liveness:
    def __init__(
        self,
        heartbeat_s: float = 5.0,
        stale_after_beats: int = 3,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        dead_after_beats: int = 3,
        lost_grace_s: float = 0.5,
    ) -> None:
        self.silence_s = heartbeat_s * stale_after_beats
        self.dead_after_beats, self.lost_grace_s = dead_after_beats, lost_grace_s
        self.clock, self.wall = clock, wall
        self.runs: dict[str, RunState] = {}

    def watch(self, run: str, world: int, steps: int, done_ranks=(), last_event=None) -> None:
        """Start (or keep) watching a run; a restarted server calls it for unfinished runs."""
        state = self.runs.get(run)
        if state is None:
            state = self.runs[run] = RunState(world, steps - 1, self.clock())
            if world and len(set(done_ranks)) >= world:
                state.status = "done"  # re-announced after it finished: nothing changes
        state.world, state.final_step = world, max(state.final_step, steps - 1)
        for rank in done_ranks:
            self._rank(state, rank).done = True
        if last_event is not None:
            for r in state.ranks.values():
                r.last_event_wall = max(r.last_event_wall or 0.0, last_event)

    def _rank(self, state: RunState, rank: int) -> RankState:
        if rank not in state.ranks:
            now = self.clock()
            state.ranks[rank] = RankState(last_seen=now, last_progress=now)
        return state.ranks[rank]

    def seen(self, run: str, rank: int) -> None:
        state = self.runs.get(run)
        if state is not None:
            self._rank(state, rank).last_seen = self.clock()

    def connected(
        self, run: str, rank: int, attempt_restarted: bool, heartbeat_s: float | None = None
    ) -> None:
        state = self.runs[run]
        r = self._rank(state, rank)
        r.connections += 1
        r.last_seen = r.last_progress = self.clock()
        r.heartbeat_s, r.lost_at, r.ended = heartbeat_s, None, False
        if attempt_restarted:  # a resumed attempt re-runs steps: not done any more
            r.done = False

    def disconnected(self, run: str, rank: int) -> None:
        state = self.runs.get(run)
        if state is not None and rank in state.ranks:
            r = state.ranks[rank]
            r.connections = max(r.connections - 1, 0)
            r.last_seen = self.clock()
            if r.connections == 0:
                r.lost_at = r.last_seen

    def ended(self, run: str, rank: int, step: int | None = None) -> None:
        """The sender stopped producing for this rank: what is unsent waits in its spool,
        which ends at ``step`` (None: not said)."""
        state = self.runs.get(run)
        if state is not None:
            r = self._rank(state, rank)
            r.ended, r.ended_step, r.last_seen = True, step, self.clock()

    def stored(self, run: str, rank: int, step: int, event_end_wall: float) -> None:
        state = self.runs.get(run)
        if state is None:
            return
        r = self._rank(state, rank)
        now = self.clock()
        r.step_interval_s, r.last_seen, r.last_progress = now - r.last_progress, now, now
        r.last_event_wall = max(r.last_event_wall or 0.0, event_end_wall)
        if step >= state.final_step:
            r.done = True

    def rank_state(self, state: RunState, rank: int, now: float) -> str:
        r = state.ranks.get(rank)
        if r is not None and r.done:
            return "done"
        if r is None:
            return "missing" if now - state.started >= self.silence_s else "live"
        if r.ended:
            return "ended"
        if r.connections == 0 and r.lost_at is not None and now - r.lost_at >= self.lost_grace_s:
            return "dead"  # its socket closed and nobody reconnected for it
        silent = now - r.last_seen
        if r.heartbeat_s is not None:
            if silent >= r.heartbeat_s * self.dead_after_beats:
                return "dead"  # missed beats: a dead peer or a frozen process
            slow_s = max(self.silence_s, 3 * r.step_interval_s)
            return "stale" if now - r.last_progress >= slow_s else "live"
        if silent < self.silence_s:
            return "live"
        return "stale" if r.connections else "dead"

    def rank_states(self, state: RunState) -> dict[int, str]:
        now = self.clock()
        return {rank: self.rank_state(state, rank, now) for rank in range(state.world)}

    def sweep(self) -> list[Change]:
        """Recompute every run's status; return the runs whose status or ranks changed."""
        changes, finished = [], []
        for run, state in self.runs.items():
            ranks = self.rank_states(state)
            status, why, named = self._status(ranks)
            early = sorted(
                rank for rank, r in state.ranks.items()
                if ranks.get(rank) == "ended" and r.ended_step is not None
                and r.ended_step < state.final_step
            )  # fmt: skip
            if early and status in ("incomplete", "running"):
                status, why, named = "failed", "early", early
            said = event_text.reason(why, named)
            reason = event_text.english(said)
            failed_at = state.failed_at
            if status == "failed" and state.status != "failed":
                ends = [r.last_event_wall for r in state.ranks.values() if r.last_event_wall]
                failed_at = max(ends) if ends else self.wall()
            elif status != "failed":
                failed_at = None
            if (status, reason, failed_at) != (state.status, state.reason, state.failed_at):
                state.status, state.reason, state.failed_at = status, reason, failed_at
                first = self._first_dead(state, ranks) if status == "failed" else None
                changes.append(Change(run, status, failed_at, reason, ranks, first, tuple(said)))
            if status == "done":
                finished.append(run)
        for run in finished:
            del self.runs[run]  # nothing left to watch
        return changes

    @staticmethod
    def _first_dead(state: RunState, ranks: dict[int, str]) -> int | None:
        """The dead rank that went first: its connection closed (or, still open, it last
        spoke) earliest. A killed rank's socket closes at once; the ranks it blocks fail
        after it and close theirs later."""
        gone = {
            rank: r.lost_at if r.lost_at is not None else r.last_seen
            for rank, r in state.ranks.items()
            if ranks.get(rank) == "dead"
        }
        return min(gone, key=lambda rank: (gone[rank], rank)) if gone else None

    @staticmethod
    def _status(ranks: dict[int, str]) -> tuple[str, str, list[int]]:
        """(status, why: event_text.REASONS' key or "", the ranks it names)."""
        by_state: dict[str, list[int]] = {}
        for rank, s in ranks.items():
            by_state.setdefault(s, []).append(rank)
        if "dead" in by_state:
            return "failed", "dead", by_state["dead"]
        stale = by_state.get("stale", []) + by_state.get("missing", [])
        if stale:
            return "stale", "stale", sorted(stale)
        if ranks and len(by_state.get("done", [])) == len(ranks):
            return "done", "", []
        ended = by_state.get("ended", [])
        if ended and len(ended) + len(by_state.get("done", [])) == len(ranks):
            return "incomplete", "unsent", ended
        return "running", "", []

    def snapshot(self, run: str) -> dict[int, str] | None:
        state = self.runs.get(run)
        return None if state is None else self.rank_states(state)
