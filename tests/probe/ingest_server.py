"""A tiny ingest server speaking app.core.inputs.protocol, for the reporter tests.

It keeps what it stores across restarts (the object outlives each websockets server), so a
test can stop it, let the probe keep training, start it again on the same port and check
that nothing was lost or duplicated.
"""

from __future__ import annotations

import socket
import threading
from http import HTTPStatus

from websockets.sync.server import serve

from app.core.inputs.protocol import AckFrame, HelloFrame, RecordFrame, parse_frame


class IngestServer:
    def __init__(self, token: str) -> None:
        self.token = token
        self.port = _free_port()
        self.stored: dict[tuple[str, int], dict[int, dict]] = {}  # (run, rank) -> step -> rec
        self.hellos: list[HelloFrame] = []
        self.received = 0  # record frames, duplicates included
        self.heartbeats = 0
        self.lock = threading.Lock()
        self._server = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/ingest"

    def start(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen()
        self._server = serve(self._handle, sock=sock, process_request=self._check_token)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def steps(self, run: str, rank: int) -> list[int]:
        with self.lock:
            return sorted(self.stored.get((run, rank), {}))

    def _check_token(self, connection, request):
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return connection.respond(HTTPStatus.UNAUTHORIZED, "bad token\n")
        return None

    def _handle(self, ws) -> None:
        hello = parse_frame(ws.recv())
        assert isinstance(hello, HelloFrame)
        key = (hello.info.run, hello.rank)
        with self.lock:
            self.hellos.append(hello)
            ws.send(self._ack(key).model_dump_json())
        for text in ws:
            frame = parse_frame(text)
            if not isinstance(frame, RecordFrame):
                self.heartbeats += 1
                continue
            rec = frame.record
            with self.lock:
                self.received += 1
                steps = self.stored.setdefault(key, {})
                old = steps.get(rec.step)
                if old is None or old["attempt"] <= rec.attempt:  # higher attempt replaces
                    steps[rec.step] = rec.model_dump()
                ack = AckFrame(run=rec.run, rank=rec.rank, attempt=rec.attempt, step=rec.step)
            ws.send(ack.model_dump_json())

    def _ack(self, key) -> AckFrame:
        steps = self.stored.get(key, {})
        if not steps:
            return AckFrame(run=key[0], rank=key[1])
        last = max(steps.values(), key=lambda r: (r["attempt"], r["step"]))
        return AckFrame(run=key[0], rank=key[1], attempt=last["attempt"], step=last["step"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
