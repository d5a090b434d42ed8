"""One producer connection's side of app.core.inputs.protocol, apart from the socket itself.

``Session.handle`` takes one inbound message and returns what to send back, in order:
strings (an ack for hello, error frames), ``PendingAck`` (a record's ack, sent once its
transaction commits) and ``PendingBatch`` (a records frame's acks, the same per record).
Nothing invalid is stored: a bad frame gets an error frame and a strike; ``max_strikes`` of
them, or one fatal error, closes the connection (1008). A valid record the store still
refuses (``RowRejected``) gets a non-fatal error naming it, and the connection goes on.

A records frame is validated whole (malformed: one bad frame naming ``records.<i>.<field>``,
nothing stored); then each record is admitted as alone, the admitted ones go to the writer
together (one transaction), and any refused makes the frame one strike (strikes count frames).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import NamedTuple

import msgspec
from pydantic import ValidationError

from app.core.inputs.protocol import (
    MAX_DROPPED_EVENTS,
    AckFrame,
    ErrorFrame,
    HeartbeatFrame,
    HelloFrame,
    RecordFrame,
    RecordsFrame,
    parse_frame,
    run_layout,
)
from app.core.inputs.protocol_fast import AnyRecord, parse_ingest_frame, with_events
from app.core.inputs.protocol_fast import RecordsFrame as FastRecords
from app.core.layout.topology import Layout
from app.live.services import Live
from app.live.store import RowRejected, Welcome


# Named tuples, one per record or frame read: ~1 us less to make than frozen dataclasses.
class PendingAck(NamedTuple):
    future: asyncio.Future  # the record's commit
    rec: AnyRecord  # submitted; its ack frame (ack_of) only when sent: acks coalesce

    @property
    def ack(self) -> str:  # the ack frame to send when it resolves
        return ack_of(self.rec)

    @property
    def what(self) -> str:  # names the record in the error frame if the store refuses it
        return what_of(self.rec)


class PendingBatch(NamedTuple):
    future: asyncio.Future  # the records' commit: their results in order (Writer.submit_many)
    recs: list  # submitted; ack_of/what_of only when sent (one ack covers a whole frame)


class Fatal(Exception):
    """Close the connection with policy violation (1008) after sending ``before`` (what is
    owed for the frame's records already accepted) and ``frame``."""

    def __init__(self, frame: str, reason: str, before: tuple = ()) -> None:
        super().__init__(reason)
        self.frame, self.reason, self.before = frame, reason, before


def error(code: str, message: str, fatal: bool = False) -> str:
    return ErrorFrame(code=code, message=message[:2000], fatal=fatal).model_dump_json()


def describe(exc: ValidationError) -> str:
    """The first few problems by field, never the rejected values themselves."""
    parts = []
    for e in exc.errors()[:3]:
        loc = ".".join(str(x) for x in e.get("loc", ()))
        parts.append(f"{loc}: {e.get('msg', 'invalid')}" if loc else str(e.get("msg")))
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _wrong_version(text: str, exc: ValidationError) -> bool:
    """A frame that names a protocol version other than ours (hello.v or record.v)."""
    if any(e.get("type") == "json_invalid" for e in exc.errors()):
        return False  # not JSON at all (pydantic's parser bounds nesting; json's recurses)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # '[' * 100000: a strike, not a 1011 (issue 26)
        return False
    if not isinstance(obj, dict):
        return False
    inner = obj.get("record") if isinstance(obj.get("record"), dict) else {}
    versions = [v for v in (obj.get("v"), inner.get("v")) if v is not None]
    return any(v != 1 for v in versions)


def _over_bounds(exc: ValidationError) -> bool:
    """A hello whose run is too big to serve (protocol.oversize: a product over its bound)."""
    return any(e["loc"] == ("hello",) and e["type"] == "value_error" for e in exc.errors())


def fit_events(rec: AnyRecord, cap: int) -> AnyRecord | None:
    """The record within ``cap`` events, as the probe keeps within MAX_EVENTS: TP pulses go
    first, then sends, then receives, each counted in ``dropped_events``; None when its
    compute alone is over. The cap is the run's share of a step the analysis can read."""
    events = rec.events
    if len(events) <= cap:
        return rec
    for kind in ("tp", "pp_send", "pp_recv"):
        over = len(events) - cap
        if over <= 0:
            break
        seen, kept = 0, []
        for e in reversed(events):  # the latest of the kind go, as in gpu_probe/train.py
            if e.kind == kind and seen < over:
                seen += 1
                continue
            kept.append(e)
        events = kept[::-1]
    if len(events) > cap:
        return None
    dropped = min(rec.dropped_events + len(rec.events) - len(events), MAX_DROPPED_EVENTS)
    return with_events(rec, events, dropped)


def _fast_frame(text: str):
    """A record or records frame by the fast decoder (app.core.inputs.protocol_fast), or None:
    what it refuses goes to parse_frame, which refuses, names and counts it as ever."""
    try:
        return parse_ingest_frame(text)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return None


def ack_of(rec: AnyRecord) -> str:
    # AckFrame's JSON, written directly (a run name is [A-Za-z0-9._-]: nothing to escape).
    return (f'{{"type":"ack","run":"{rec.run}","rank":{rec.rank},'
            f'"attempt":{rec.attempt},"step":{rec.step}}}')  # fmt: skip


def what_of(rec: AnyRecord) -> str:
    return f"record of step {rec.step} (attempt {rec.attempt})"


class Session:
    def __init__(self, live: Live) -> None:
        self.live = live
        self.hello: HelloFrame | None = None
        self.layout: Layout | None = None
        self.coord = None  # the layout's coordinate of the hello's rank
        # Found once at the hello: the run's events cap, (run, rank, dp, pp, tp) of its rank.
        self.cap, self.mine = 0, None
        self.strikes = 0

    async def handle(self, text: str | None, data: bytes | None) -> list:
        self.live.stats.frames += 1
        if text is None:
            return self._strike("binary frames are not part of protocol v1; send JSON text")
        if len(text) > self.live.config.max_frame_bytes:
            return self._strike(f"frame of {len(text)} bytes exceeds the cap")
        fast = _fast_frame(text)
        if isinstance(fast, FastRecords):
            return self._on_records(fast.records)
        if fast is not None:
            return self._on_record(fast.record)
        try:
            frame = parse_frame(text)
        except ValidationError as exc:
            if _wrong_version(text, exc):
                msg = "this server speaks protocol v1"
                raise Fatal(error("unsupported_version", msg, fatal=True), msg) from exc
            if _over_bounds(exc):  # retrying cannot help: tell the probe to stop
                msg = f"run not accepted: {describe(exc)}"
                raise Fatal(error("bad_frame", msg, fatal=True), msg) from exc
            return self._strike(describe(exc))
        except (ValueError, RecursionError) as exc:
            return self._strike(str(exc)[:300])
        if isinstance(frame, HelloFrame):
            return await self._on_hello(frame)
        if isinstance(frame, RecordFrame):
            return self._on_record(frame.record)
        if isinstance(frame, RecordsFrame):
            return self._on_records(frame.records)
        if isinstance(frame, HeartbeatFrame):
            return self._on_heartbeat(frame)
        return self._strike(f"{frame.type} frames go from the server to the probe")

    def _strike(self, message: str, before: tuple = (), more: tuple = ()) -> list:
        """One bad frame: its error frame (and ``more`` before it, one per refused record of
        a records frame), after ``before`` (the acks owed for what of it was accepted)."""
        self.strikes += 1
        self.live.stats.invalid += 1
        if self.strikes >= self.live.config.max_strikes:
            msg = f"{self.strikes} invalid frames: closing ({message})"
            owed = (*before, *(error("bad_frame", m) for m in more))
            raise Fatal(error("bad_frame", msg, fatal=True), msg, owed)
        return [*before, *(error("bad_frame", m) for m in more), error("bad_frame", message)]

    async def _on_hello(self, hello: HelloFrame) -> list:
        info = hello.info
        if hello.rank >= info.world_size:
            return self._strike(f"rank {hello.rank} outside a world of {info.world_size}")
        if self.mine is not None and self.mine[:2] != (info.run, hello.rank):
            return self._strike("one connection speaks for one (run, rank)")
        try:
            layout = run_layout(info)
        except ValueError as exc:
            return self._strike(str(exc))
        now = time.time()
        try:
            welcome: Welcome = await self.live.writer.submit(
                "hello", info, hello.rank, hello.attempt, now
            )
        except RowRejected as exc:
            msg = f"hello not stored: {exc}"
            raise Fatal(error("bad_frame", msg, fatal=True), msg) from exc
        if welcome.conflict is not None:
            raise Fatal(error("bad_frame", welcome.conflict, fatal=True), welcome.conflict)
        first = self.hello is None
        self.hello, self.layout, self.coord = hello, layout, layout.coord(hello.rank)
        c = self.coord
        here = (info.run, hello.rank, c.dp, c.pp, c.tp, c.cp, c.ep)
        self.cap, self.mine = info.events_cap(), here
        await self.live.watch(info)
        if first:
            restarted = welcome.cursor is not None and hello.attempt > welcome.cursor[0]
            self.live.liveness.connected(
                info.run, hello.rank, attempt_restarted=restarted, heartbeat_s=hello.heartbeat_s
            )
        # Nothing stored: (0, None), so the reporter replays its whole spool, older attempts'
        # steps before the resume point included.
        attempt, step = welcome.cursor if welcome.cursor else (0, None)
        ack = AckFrame(run=info.run, rank=hello.rank, attempt=attempt, step=step)
        return [ack.model_dump_json()]

    def _on_record(self, rec: AnyRecord) -> list:
        rec, problem = self._admit(rec)
        if problem:
            return self._strike(problem)
        # A partial record (the step this rank did not finish) is kept apart from the steps.
        future = self.live.writer.submit("stop" if rec.stopped else "record", rec, time.time())
        return [PendingAck(future, rec)]

    def _on_records(self, recs: list) -> list:
        """A records frame: every record admitted as ``_on_record`` would, the admitted ones
        in one group (one transaction), one strike for the frame if any was refused."""
        if self.hello is None:
            return self._strike("say hello before sending records")
        ops, admitted, refused = [], [], []
        now = time.time()
        for i, rec in enumerate(recs):
            rec, problem = self._admit(rec)
            if problem:
                refused.append(f"records.{i}: {problem}")
                continue
            ops.append(("stop" if rec.stopped else "record", (rec, now)))
            admitted.append(rec)
        out = (PendingBatch(self.live.writer.submit_many(ops), admitted),) if ops else ()
        if not refused:
            return list(out)
        return self._strike(refused[-1], before=out, more=tuple(refused[:-1]))

    def _admit(self, rec: AnyRecord) -> tuple[AnyRecord, str | None]:
        """The record as stored (within the run's events cap), or why it is refused."""
        c, hello = rec.coord, self.hello  # the common case at once, _check's reasons if not
        got = (rec.run, rec.rank, c.dp, c.pp, c.tp, c.cp, c.ep)
        ok = got == self.mine and len(rec.events) <= self.cap
        if ok and rec.attempt <= hello.attempt and rec.step < hello.info.steps:
            return rec, None
        problem = self._check(rec)
        if problem:
            return rec, problem
        fitted = fit_events(rec, self.cap)
        if fitted is None:
            return rec, f"events: more F, B and W than {self.cap} per record in this world"
        return fitted, None

    def _check(self, rec: AnyRecord) -> str | None:
        """Cross-checks against this connection's hello: the record must be its rank's."""
        hello = self.hello
        if hello is None:
            return "say hello before sending records"
        if (rec.run, rec.rank) != (hello.info.run, hello.rank):
            return f"record for ({rec.run}, {rec.rank}) on a connection of rank {hello.rank}"
        if rec.attempt > hello.attempt:
            return f"record of attempt {rec.attempt} after a hello of attempt {hello.attempt}"
        if rec.step >= hello.info.steps:
            return f"step {rec.step} beyond the run's {hello.info.steps} steps"
        c = self.coord  # the hello's rank's, and rec.rank is that rank
        rc = rec.coord
        if (c.dp, c.pp, c.tp, c.cp, c.ep) != (rc.dp, rc.pp, rc.tp, rc.cp, rc.ep):
            beyond = f" cp={c.cp} ep={c.ep}" if hello.info.cp * hello.info.ep > 1 else ""
            return f"rank {rec.rank} sits at dp={c.dp} pp={c.pp} tp={c.tp}{beyond} in this layout"
        return None

    def _on_heartbeat(self, beat: HeartbeatFrame) -> list:
        hello = self.hello
        if hello is None or (beat.run, beat.rank) != (hello.info.run, hello.rank):
            return self._strike("heartbeat for another (run, rank) than this connection's")
        self.live.liveness.seen(beat.run, beat.rank)
        if beat.ended:  # its spool holds what is unsent: not dead when it disconnects
            self.live.liveness.ended(beat.run, beat.rank, beat.step)
        return []

    def closed(self) -> None:
        if self.hello is not None:
            self.live.liveness.disconnected(self.hello.info.run, self.hello.rank)
