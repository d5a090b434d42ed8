"""Test helpers for the live side: servers (thread or subprocess), runs and records shaped
like the probe's, and a faithful protocol client. Loopback only; everything started here
is stopped through the handle that started it (a PID for subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import uvicorn
from websockets.asyncio.client import ClientConnection, connect

from app.core.inputs.protocol import HelloFrame, ProbeRecord, RunInfo
from app.core.layout.topology import Layout, parse_order
from app.core.schedules import build
from app.core.simulate import Durations, simulate

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "live-test-token-" + "x" * 16
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SHAPE = {"hidden": 64, "heads": 4, "layers": 2, "vocab": 64, "seq_len": 16, "microbatch_size": 1}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout_s: float = 10.0, every_s: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every_s)
    return bool(predicate())


def get_json(base: str, path: str, timeout_s: float = 10.0):
    with urllib.request.urlopen(base + path, timeout=timeout_s) as resp:
        return json.loads(resp.read())


def all_steps(base: str, run: str) -> list[dict]:
    """Every stored record of a run, page by page: the server bounds a page by its events
    (issue 26 item 2) and next_since says where the next one starts."""
    out, since = [], -1
    while since is not None:
        page = get_json(base, f"/api/runs/{run}/steps?since={since}&limit=20000")
        out += page["records"]
        since = page["next_since"]
    return out


class ServerThread:
    """uvicorn in a thread of this process, stopped through its own handle."""

    def __init__(self, app) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.app = app

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        if not wait_until(lambda: self.server.started, 20):
            raise RuntimeError("server did not start")
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


class ServerProcess:
    """``python -m app.cli serve`` in a subprocess; killed by its PID only."""

    def __init__(self, db: Path, port: int | None = None, token: str = TOKEN) -> None:
        self.db, self.port, self.token = db, port or free_port(), token
        self.proc: subprocess.Popen | None = None

    base = ServerThread.base
    ws = ServerThread.ws

    def start(self) -> ServerProcess:
        env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=self.token, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1",
               "--port", str(self.port), "--db", str(self.db)]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if not wait_until(self._healthy, 30, 0.05):
            self.kill()
            raise RuntimeError("server subprocess did not come up")
        return self

    def _healthy(self) -> bool:
        try:
            return get_json(self.base, "/healthz", 1)["status"] == "ok"
        except OSError:
            return False

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def kill(self) -> None:
        """SIGKILL: the hard crash the restart test needs (no shutdown, no flush)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def run_info(
    run: str, dp=1, tp=1, pp=2, steps=10, schedule="1f1b", m=4, v=1, peak_tflops=None
) -> RunInfo:
    return RunInfo(
        run=run, dp=dp, tp=tp, pp=pp, order="tp-pp-dp", gpus_per_node=8, schedule=schedule,
        microbatches=m, virtual_stages=v, steps=steps, dtype="fp32", device="cpu",
        model=SHAPE, peak_tflops=peak_tflops,
    )  # fmt: skip


def hello(info: RunInfo, rank: int, attempt: int = 0) -> str:
    return HelloFrame(rank=rank, attempt=attempt, info=info).model_dump_json()


def records(
    info: RunInfo,
    step: int,
    attempt: int = 0,
    t0: float | None = None,
    f: float = 0.01,
    b: float = 0.02,
    slow_rank: int | None = None,
) -> list[dict]:
    """One step of every rank, shaped like the probe's: the schedule simulated with the given
    durations, a TP pulse inside each F/B, receives and sends with peers, then dp, optim."""
    layout = Layout(info.dp, info.tp, info.pp, parse_order(info.order), info.gpus_per_node)
    actions = build(info.schedule, info.pp, info.microbatches, info.virtual_stages)
    tl = simulate(info.schedule, actions, Durations(f, b, 0.0, 0.001), info.virtual_stages)
    t0 = time.time() if t0 is None else t0
    out = []
    for rank in range(layout.world_size):
        c = layout.coord(rank)
        stretch = 1.5 if rank == slow_rank else 1.0
        events = []
        for e in (e for e in tl.events if e.stage == c.pp):
            start, end = e.start * stretch, e.end * stretch
            label = {"microbatch": e.microbatch, "chunk": e.chunk}
            events.append({"kind": e.kind, **label, "start": start, "end": end})
            if info.tp > 1:
                events.append({"kind": "tp", **label, "start": end - 0.1 * (end - start),
                               "end": end})  # fmt: skip
            src = c.pp - 1 if e.kind == "F" else c.pp + 1
            if 0 <= src < info.pp and start >= 0.001:
                peer = layout.rank_of(c.dp, src, c.tp)
                events.append({"kind": "pp_recv", **label, "start": start - 0.001, "end": start,
                               "peer": peer})  # fmt: skip
            dst = c.pp + 1 if e.kind == "F" else c.pp - 1
            if 0 <= dst < info.pp:
                peer = layout.rank_of(c.dp, dst, c.tp)
                events.append({"kind": "pp_send", **label, "start": end, "end": end + 0.001,
                               "peer": peer})  # fmt: skip
        mk = tl.makespan * stretch
        events += [{"kind": "dp", "start": mk, "end": mk + 0.002},
                   {"kind": "optim", "start": mk + 0.002, "end": mk + 0.003}]  # fmt: skip
        rec = {
            "run": info.run, "rank": rank, "coord": {"dp": c.dp, "pp": c.pp, "tp": c.tp},
            "node": layout.node(rank), "step": step, "attempt": attempt, "t0": t0,
            "events": events, "loss": 3.0 - 0.01 * step if c.pp == info.pp - 1 else None,
            "mem": 1_000_000 * (info.pp - c.pp),
        }  # fmt: skip
        out.append(ProbeRecord.model_validate(rec).model_dump(mode="json", exclude_none=True))
    return out


def probe_env() -> dict[str, str]:
    """The environment a probe started from a test runs in: this checkout, the test token,
    and no outer launcher's RANK/WORLD_SIZE leaking in."""
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=TOKEN, PYTHONPATH=str(ROOT))
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    return env


def record_frame(rec: dict) -> str:
    return json.dumps({"type": "record", "record": rec})


@asynccontextmanager
async def producers(ws_base: str, info: RunInfo, n: int) -> AsyncIterator[list[ClientConnection]]:
    """n authenticated ingest connections, ranks 0..n-1, each past its hello."""
    async with AsyncExitStack() as stack:
        socks = [
            await stack.enter_async_context(
                connect(ws_base + "/ws/ingest", additional_headers=AUTH)
            )
            for _ in range(n)
        ]
        for rank, ws in enumerate(socks):
            await ws.send(hello(info, rank))
            await ws.recv()
        yield socks


def ingest_steps(client, info: RunInfo) -> None:
    """Every rank's every step of ``info`` through a TestClient's /ws/ingest, each acked.
    A copy of AUTH: Starlette's TestClient adds its handshake headers to the dict it is
    given, and AUTH is shared with tests whose real websockets client would send them twice."""
    for rank in range(info.world_size):
        with client.websocket_connect("/ws/ingest", headers=dict(AUTH)) as ws:
            ws.send_text(hello(info, rank))
            assert ws.receive_json()["type"] == "ack"
            for step in range(info.steps):
                ws.send_text(record_frame(records(info, step)[rank]))
                assert ws.receive_json()["type"] == "ack"


def poisoned_db(path, schema: str, step: int) -> None:
    """A real store whose table refuses one row (rank 0, ``step``) with a trigger, the way
    SQLite refuses an unstorable value: the error comes from the database itself."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.executescript(schema)
        conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON steps"
            f" WHEN NEW.rank = 0 AND NEW.step = {step}"
            " BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
