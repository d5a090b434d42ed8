"""Spool first, then send in the background: a server outage loses nothing, and a slow or
absent server never blocks a training step.

``Spool`` is an append-only JSONL file per rank, flushed per record. ``Sender`` is a daemon
thread with a bounded queue of record lines. ``publish`` writes the spool, then offers the
line to the queue without waiting; when the queue is full the line is dropped from the
queue only, and the sender reads it back from the spool later. On every (re)connection the
sender says hello, the server answers with the cursor it has stored up to, and the sender
replays the spool after that cursor before taking new lines from the queue. Frames are
app.core.inputs.protocol's; records waiting together (a spool replayed, an upload) go as
``records`` frames where the server offers them (gpu_probe.batching), else one per frame.

The sender beats every ``HEARTBEAT_S`` when idle and says so in its hello, so the server
sees a dead rank within a few beats. Closing after a clean finish first announces the end
(``HeartbeatFrame.ended``): a rank whose records the server has not all acked by the flush
timeout is then shown as "incomplete", not dead, and ``unsent()`` says how many records
``meshscope upload`` (gpu_probe.upload) still has to send.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from pathlib import Path

from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from app.core.inputs.protocol import (
    MAX_FRAME_BYTES,
    AckFrame,
    ErrorFrame,
    HeartbeatFrame,
    HelloFrame,
    parse_frame,
)
from gpu_probe.batching import frames, offered_batch

Cursor = tuple[int, int]  # (attempt, step)
NOTHING: Cursor = (-1, -1)
HEARTBEAT_S = 0.5  # idle beat; the server calls a rank dead after 3 missed (~1.5 s)


class SpoolConflictError(RuntimeError):
    pass


class Spool:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = None

    def records(self) -> list[tuple[Cursor, str]]:
        """Complete lines only: a rank killed mid-write leaves a partial last line."""
        if not self.path.exists():
            return []
        out = []
        with self.path.open("r", encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break
                try:
                    rec = json.loads(line)
                    out.append(((int(rec["attempt"]), int(rec["step"])), line.rstrip("\n")))
                except (ValueError, KeyError, TypeError):
                    continue
        return out

    def last_attempt(self) -> int | None:
        attempts = [cursor[0] for cursor, _ in self.records()]
        return max(attempts) if attempts else None

    def keep_before(self, step: int) -> None:
        """Resume: the steps from ``step`` on are re-run, so drop their old records."""
        kept = [line for (_, s), line in self.records() if s < step]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        os.replace(tmp, self.path)

    def append(self, line: str) -> None:
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(line + "\n")
        self._file.flush()  # a crash right after a step still leaves the step on disk

    def after(self, cursor: Cursor) -> list[tuple[Cursor, str]]:
        return [(c, line) for c, line in self.records() if c > cursor]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _Fatal(Exception):
    """The server refused us for good (bad token, bad version): stop trying."""


class Sender(threading.Thread):
    def __init__(
        self,
        spool: Spool,
        url: str,
        token: str,
        hello: HelloFrame,
        capacity: int = 256,
        heartbeat_s: float | None = HEARTBEAT_S,
    ):
        super().__init__(name=f"probe-sender-{hello.rank}", daemon=True)
        self.spool, self.url, self.token = spool, url, token
        self.hello = hello.model_copy(update={"heartbeat_s": heartbeat_s})
        self.lines: queue.Queue[tuple[Cursor, str]] = queue.Queue(maxsize=capacity)
        self.overflowed = threading.Event()
        self.stopping = threading.Event()
        self.acked: Cursor = NOTHING
        self.last_published: Cursor = NOTHING
        self.error: str | None = None
        self.resumed_from: Cursor | None = None  # the server's cursor at the first hello
        self.ending = threading.Event()  # set with stopping after a clean finish: announce it
        self._sent: Cursor = NOTHING
        self._announced = False
        self._heartbeat_s = heartbeat_s or 5.0
        self._batch = 1  # records per frame on this connection (offered_batch)

    def offer(self, cursor: Cursor, line: str) -> None:
        """Never blocks: a full queue only means the line is re-read from the spool."""
        self.last_published = cursor
        try:
            self.lines.put_nowait((cursor, line))
        except queue.Full:
            self.overflowed.set()

    def done(self) -> bool:
        return self.acked >= self.last_published

    def run(self) -> None:
        backoff = 0.1
        while not (self.stopping.is_set() and self.done()):
            try:
                self._session()
                backoff = 0.1
            except _Fatal as err:
                self.error = str(err)
                print(f"[probe] reporting stopped: {err}", file=sys.stderr, flush=True)
                return
            except Exception as err:  # noqa: BLE001 - any network failure: retry later
                self.error = f"{type(err).__name__}: {err}"
            if self.stopping.wait(backoff) and self.done():
                return
            backoff = min(backoff * 2, 2.0)

    def _session(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            ws = connect(
                self.url, additional_headers=headers, open_timeout=5, max_size=MAX_FRAME_BYTES
            )
        except InvalidStatus as err:
            if err.response.status_code in (401, 403):
                raise _Fatal(f"server refused the token (HTTP {err.response.status_code})") from err
            raise
        with ws:
            self._batch = offered_batch(ws.response.headers)
            ws.send(self.hello.model_dump_json())
            self._sent = self.acked = self._await_ack(ws)
            if self.resumed_from is None:
                self.resumed_from = self.acked
            self.error, self._announced = None, False
            self._pump(ws)

    def _pump(self, ws) -> None:
        self._announce_end(ws)  # an upload says so before it replays: it may be cut short
        self._replay(ws)
        last_io = time.monotonic()
        while not (self.stopping.is_set() and self.done() and self._announced_if_due()):
            self._announce_end(ws)  # a probe that finished: before the flush, which may not
            if self.overflowed.is_set():
                self.overflowed.clear()
                self._replay(ws)
            waiting: list[tuple[Cursor, str]] = []
            try:
                waiting.append(self.lines.get(timeout=0.05))
                while len(waiting) < self._batch:  # what queued meanwhile goes with it
                    waiting.append(self.lines.get_nowait())
            except queue.Empty:
                pass
            if waiting:
                self._send(ws, [(c, line) for c, line in waiting if c > self._sent])
                last_io = time.monotonic()
            elif time.monotonic() - last_io > self._heartbeat_s:
                ws.send(self._heartbeat())
                last_io = time.monotonic()
            self._read_acks(ws, wait_s=0.0)
            if self.stopping.is_set() and not self.done():
                self._read_acks(ws, wait_s=0.05)

    def _replay(self, ws) -> None:
        pending = self.spool.after(self._sent)
        for i in range(0, len(pending), self._batch):
            self._send(ws, pending[i : i + self._batch])
            self._read_acks(ws, wait_s=0.0)

    def _send(self, ws, items: list[tuple[Cursor, str]]) -> None:
        for frame in frames([line for _, line in items], self._batch):
            ws.send(frame)
        self._sent = max([self._sent, *(c for c, _ in items)])

    def _await_ack(self, ws) -> Cursor:
        frame = parse_frame(ws.recv(timeout=10))
        if isinstance(frame, ErrorFrame):
            raise (_Fatal if frame.fatal else ConnectionError)(f"{frame.code}: {frame.message}")
        if not isinstance(frame, AckFrame):
            raise ConnectionError(f"expected an ack after hello, got {frame.type}")
        return frame.cursor()

    def _read_acks(self, ws, wait_s: float) -> None:
        while True:
            try:
                text = ws.recv(timeout=wait_s)
            except TimeoutError:
                return
            frame = parse_frame(text)
            if isinstance(frame, AckFrame):
                self.acked = max(self.acked, frame.cursor())
            elif isinstance(frame, ErrorFrame):
                if frame.fatal:
                    raise _Fatal(f"{frame.code}: {frame.message}")
                self.error = f"{frame.code}: {frame.message}"
            wait_s = 0.0

    def _announce_end(self, ws) -> None:
        if self.ending.is_set() and not self._announced:
            ws.send(self._heartbeat(ended=True))
            self._announced = True

    def _announced_if_due(self) -> bool:
        return self._announced or not self.ending.is_set()

    def _heartbeat(self, ended: bool = False) -> str:
        step = None if self.last_published == NOTHING else self.last_published[1]
        frame = HeartbeatFrame(
            run=self.hello.info.run,
            rank=self.hello.rank,
            step=step,
            sent_at=time.time(),
            ended=ended,
        )
        return frame.model_dump_json()


class Reporter:
    """What the training loop talks to: ``publish`` per step, ``close`` at the end."""

    def __init__(
        self,
        spool: Spool,
        server: str | None,
        token: str | None,
        hello: HelloFrame,
        capacity: int = 256,
    ) -> None:
        self.spool = spool
        self.sender = Sender(spool, server, token or "", hello, capacity) if server else None
        if self.sender is not None:
            self.sender.start()

    def publish(self, cursor: Cursor, line: str) -> None:
        self.spool.append(line)
        if self.sender is not None:
            self.sender.offer(cursor, line)

    def close(self, timeout_s: float, finished: bool = True) -> bool:
        """Wait up to ``timeout_s`` for the server to ack everything; True when it did.
        ``finished``: the rank ran to its end, so the server is told it ended (not died)."""
        self.spool.close()
        return self.stop(timeout_s, finished)

    def stop(self, timeout_s: float, finished: bool = False) -> bool:
        """Flush what the server takes within ``timeout_s``, leaving the spool file open
        (a signal handler calls this while the training thread may still write)."""
        if self.sender is None:
            return True
        if finished:
            self.sender.ending.set()
        self.sender.stopping.set()
        self.sender.join(timeout_s)
        return self.sender.done()

    def unsent(self) -> int:
        """Spooled records the server has not acked (0 without a server: nothing to send)."""
        if self.sender is None:
            return 0
        return len(self.spool.after(self.sender.acked))
