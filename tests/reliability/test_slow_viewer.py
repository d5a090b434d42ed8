"""A viewer whose socket never drains (a raw TCP client with a tiny receive buffer that
never reads) is cut off, while healthy viewers keep receiving everything promptly and the
server's memory stays flat."""

import asyncio
import base64
import json
import os
import re
import socket
import time
import urllib.request

import pytest
from support import AUTH, ServerProcess, hello, record_frame, records, run_info
from websockets.asyncio.client import connect

pytestmark = pytest.mark.timeout(120)
STALLED, HEALTHY = 4, 3
STREAM_S, STEPS_PER_S = 12.0, 40


def stalled_viewer(port: int, run: str) -> socket.socket:
    """Handshake by hand, then never read again; a 1 KiB window fills at once."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connect: sets the window
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        f"GET /ws/runs/{run} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        .encode()
    )  # fmt: skip
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0]
    return s


def metric(base: str, name: str) -> float:
    text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
    return float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))


async def produce(server, info) -> None:
    conns = []
    for rank in range(info.world_size):
        ws = await connect(server.ws + "/ws/ingest", additional_headers=AUTH)
        await ws.send(hello(info, rank))
        await ws.recv()
        conns.append(ws)
    drains = [asyncio.create_task(_drain(ws)) for ws in conns]
    template = records(info, 0)
    for step in range(int(STREAM_S * STEPS_PER_S)):
        now = time.time()  # t0 = sent at, so latency = received - t0
        for ws, rec in zip(conns, template, strict=True):
            await ws.send(record_frame(rec | {"step": step, "t0": now}))
        await asyncio.sleep(1 / STEPS_PER_S)
    await asyncio.sleep(1.0)
    for ws in conns:
        await ws.close()
    for task in drains:
        task.cancel()


async def _drain(ws) -> None:
    async for _ in ws:  # acks
        pass


async def watch(server, run, out: dict) -> None:
    async with connect(f"{server.ws}/ws/runs/{run}") as ws:
        async for message in ws:
            now = time.time()
            for frame in json.loads(message):
                out["gaps"] += frame["type"] == "gap"
                for item in frame.get("items", []):
                    if item["type"] == "record":
                        out["latency"].append(now - item["t0"])
                        out["keys"].add((item["rank"], item["step"]))


def test_a_stalled_viewer_is_cut_off_and_nobody_else_notices(tmp_path):
    info = run_info("slow", dp=2, pp=4, steps=100_000)
    server = ServerProcess(tmp_path / "live.sqlite3").start()
    stuck = [stalled_viewer(server.port, "slow") for _ in range(STALLED)]
    seen = [{"latency": [], "keys": set(), "gaps": 0} for _ in range(HEALTHY)]
    rss = []

    async def sample():
        while True:
            rss.append(server.rss_kib())
            await asyncio.sleep(0.5)

    async def main():
        watchers = [asyncio.create_task(watch(server, "slow", s)) for s in seen]
        sampler = asyncio.create_task(sample())
        await asyncio.sleep(0.5)
        await produce(server, info)
        await asyncio.sleep(0.5)
        for t in (*watchers, sampler):
            t.cancel()

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
        kicked = metric(server.base, "meshscope_viewer_kicked_total")
        viewers = metric(server.base, "meshscope_viewers")
        cut = [_reads_to_eof(s) for s in stuck]
    finally:
        for s in stuck:
            s.close()
        server.stop()
    sent = {(r, s) for r in range(info.world_size) for s in range(int(STREAM_S * STEPS_PER_S))}
    assert kicked == STALLED and cut == [True] * STALLED
    assert viewers == 0  # the healthy ones have left too, and were noticed
    for s in seen:
        assert s["keys"] == sent and s["gaps"] == 0  # healthy viewers lost nothing
        lat = sorted(s["latency"])
        assert lat[len(lat) // 2] < 0.15 and lat[int(len(lat) * 0.99)] < 0.4, lat[-5:]
    warm = rss[len(rss) // 4]  # after start-up and the first seconds of stalling
    assert max(rss) - warm < 20 * 1024, (warm, max(rss))  # KiB: flat, not growing per frame


def _reads_to_eof(s: socket.socket, timeout_s: float = 10.0) -> bool:
    """Drain what the server had already buffered: a cut-off socket then reaches EOF (or a
    reset, when the server aborted it); a socket still served would time out instead."""
    s.settimeout(timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if not s.recv(65536):
                return True
        except ConnectionResetError:
            return True  # aborted by the server: cut off just the same
        except TimeoutError:
            return False
    return False
