"""The live side's long-lived objects, built from settings in the app's lifespan.

``Live`` owns the store (writer thread + readers), the hub, liveness and the counters, and
wires them: a committed record goes to the hub (for viewers) and to liveness (the rank is
alive, maybe done); a liveness change is stored, logged and fanned out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import OrderedDict

from app.core.inputs.protocol import RunInfo
from app.live import event_text
from app.live.actions_segments import Segments
from app.live.actions_warm import Warmer
from app.live.config import LiveConfig
from app.live.db_claim import Claim, read_only
from app.live.hub import Hub
from app.live.liveness import Change, Liveness
from app.live.stats import IngestStats
from app.live.store import Outcome, Store, Welcome
from app.live.store_read import Reader
from app.live.writer import Committed, Writer
from app.settings import Settings

log = logging.getLogger("meshscope.live")


class Live:
    def __init__(
        self, settings: Settings, config: LiveConfig | None = None, held: Claim | None = None
    ) -> None:
        """``held``: the database's claim, locked by ``meshscope serve`` before the server
        starts. An app made elsewhere (tests, an embedding) takes no lock, so two of them
        may share a database in one process; it still serves a read-only one read-only."""
        self.config = config = config or LiveConfig()
        self.token = settings.ingest_token
        self.host = settings.host
        self.allowed_origins = list(settings.allowed_origins)
        self.claim = held or Claim(settings.db, readonly=read_only(settings.db))
        self.readonly = self.claim.readonly
        self.store = Store(settings.db, readonly=self.readonly)
        self.reader = Reader(settings.db)
        # A run's actions as Parquet, derived from the store at query time (issue 25).
        self.actions = Segments(settings.db, settings.actions_dir, readonly=self.readonly)
        self.warmer = Warmer(self.actions)  # a stopped run's segments, before it is asked
        self.hub = Hub(config.tick_s, config.queue_frames, config.kick_after_s, config.max_viewers)
        self.liveness = Liveness(config.heartbeat_s, config.stale_after_beats)
        self.stats = IngestStats()
        self.writer = Writer(self.store, config.commit_batch, self._committed)
        self.analyses: OrderedDict = OrderedDict()  # (run, step, window, rows) -> analysis
        self._cache_lock = threading.Lock()
        self._tasks: list[asyncio.Task] = []
        self._first_dead: dict[str, int] = {}  # run -> the first-dead rank already logged

    async def start(self) -> None:
        self.writer.start()
        if self.readonly:
            log.warning("the database %s is read-only: serving its runs, refusing ingest",
                        self.store.path)  # fmt: skip
        # A restart keeps watching unfinished runs; read-only, no rank can report, and
        # a status change could not be stored.
        unfinished = [] if self.readonly else self.reader.active_runs()
        for row in unfinished:
            info = RunInfo.model_validate_json(row["info"])
            self.liveness.watch(
                info.run, info.world_size, info.steps, self._done_ranks(info), row["last_event"]
            )
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self.hub.run(), name="hub-ticker"),
            loop.create_task(self._sweep_forever(), name="liveness-sweep"),
            loop.create_task(self.warmer.run(), name="actions-warmer"),
        ]

    async def stop(self) -> None:
        self.hub.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.writer.stop()
        self.reader.close()
        self.actions.close()

    def _done_ranks(self, info: RunInfo) -> list[int]:
        cursors = self.reader.rank_cursors(info.run)
        return [rank for rank, (_, step) in cursors.items() if step >= info.steps - 1]

    async def watch(self, info: RunInfo) -> None:
        """Watch a run a producer speaks for; ranks already finished count as done."""
        if info.run not in self.liveness.runs:
            done = await self.writer.call(self._done_ranks, info)
            self.liveness.watch(info.run, info.world_size, info.steps, done)
        else:
            self.liveness.watch(info.run, info.world_size, info.steps)

    # -- commits -> viewers and liveness -------------------------------------------------------
    def _committed(self, committed: Committed) -> None:
        stored = self.stats.records
        for op, args, result in committed:
            try:
                if op == "record":
                    self._record_committed(args[0], result)
                elif op == "stop" and result:
                    rec = args[0]
                    item = {"type": "stop", "rank": rec.rank, "step": rec.step}
                    self.hub.publish(rec.run, item | {"attempt": rec.attempt})
                elif op == "hello":
                    self._hello_committed(args[0], args[2], result)
            except Exception:  # noqa: BLE001 - a fan-out bug must not stop the writer
                log.exception("live fan-out failed for %s", op)
        if self.stats.records > stored:  # the rate window once a transaction, not a record
            self.stats.rate.add(self.stats.records - stored)

    def _record_committed(self, rec, outcome: Outcome) -> None:
        if not outcome.stored:
            self.stats.duplicates += 1
            return
        self.stats.records += 1
        b = outcome.breakdown
        self.liveness.stored(rec.run, rec.rank, rec.step, rec.t0 + b.step_time_s)
        if outcome.superseded:
            self.stats.superseded += 1
            return
        item = {
            "type": "record", "rank": rec.rank, "step": rec.step, "attempt": rec.attempt,
            "t0": rec.t0, "step_time_s": b.step_time_s, "idle_frac": b.idle_frac,
            "comm_frac": b.comm_frac, "loss": rec.loss, "mem": rec.mem,
        }  # fmt: skip
        self.hub.publish(rec.run, item, rec.step)
        if outcome.done is not None:
            d = outcome.done
            step = {"type": "step", "step": d.step, "attempt": d.attempt}
            self.hub.publish(rec.run, step | {"step_time_s": d.step_time_s}, d.step)

    def _hello_committed(self, info: RunInfo, attempt: int, welcome: Welcome) -> None:
        if welcome.conflict is None:
            self.hub.publish(info.run, {"type": "attempt", "attempt": attempt})

    # -- liveness ------------------------------------------------------------------------------
    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_s)
            for change in self.liveness.sweep():
                self._apply(change)

    def _apply(self, change: Change) -> None:
        now = time.time()
        run, status = change.run, change.status
        self.writer.submit("status", run, status, change.failed_at, change.reason, now)
        detail = event_text.keyed(change.reason or change.status, change.said)
        self.writer.submit("event", change.run, None, change.status, detail, now)
        # Which rank went down first, once per failure: app.live.verdict's tie-break when
        # the records cannot tell (several ranks without a record of the failed step).
        first = change.first_dead
        if first is None:
            self._first_dead.pop(run, None)
        elif self._first_dead.get(run) != first:
            self._first_dead[run] = first
            said = [event_text.line("live.reason.first_dead", rank=first)]
            detail = event_text.keyed(event_text.english(said), said)
            self.writer.submit("event", run, first, "first_dead", detail, now)
        item = {
            "type": "status", "status": change.status, "reason": change.reason, "said": change.said,
            "failed_at": change.failed_at, "ranks": {str(r): s for r, s in change.ranks.items()},
        }  # fmt: skip
        self.hub.publish(change.run, item)
        self.warmer.stopped(run, status)

    # -- analysis cache ------------------------------------------------------------------------
    def cached(self, key: tuple, compute) -> bytes:
        """An LRU of analyses: 200 viewers of one run ask for the same step at once."""
        with self._cache_lock:  # handlers run on several threads
            if key in self.analyses:
                self.analyses.move_to_end(key)
                return self.analyses[key]
        value = compute()
        with self._cache_lock:
            self.analyses[key] = value
            while len(self.analyses) > 64:
                self.analyses.popitem(last=False)
        return value
