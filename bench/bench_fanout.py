"""Fan-out benchmark (not a test): 1 producer, N viewers, all on loopback.

A server runs in its own process (``python -m app.cli serve``); this process runs the
producer (one rank streaming records at a fixed rate, each stamped with its send time in
``t0``) and N viewer websockets. For each N it prints the delivered fraction (records each
viewer received over records sent; min and mean over viewers), gap notices, and the p50 and
p99 end-to-end latency (viewer receive time minus send time, so it includes validation,
the group commit with its fsync, the ~100 ms coalescing tick and delivery).

    python bench/bench_fanout.py [--viewers 50,200,400] [--rate 50] [--seconds 10]

Target (issue 6): 200 viewers x 50 events/s, 100% delivered, p99 <= 250 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from support import TOKEN, ServerProcess, hello, record_frame, records, run_info  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Viewer:
    def __init__(self) -> None:
        self.latency: list[float] = []
        self.gaps = 0

    async def watch(self, url: str, ready: asyncio.Event, counter: list[int], n: int) -> None:
        async with connect(url, max_size=None) as ws:
            await ws.recv()  # hello
            counter[0] += 1
            if counter[0] == n:
                ready.set()
            async for message in ws:
                now = time.time()
                for frame in json.loads(message):
                    self.gaps += frame["type"] == "gap"
                    for item in frame.get("items", []):
                        if item["type"] == "record":
                            self.latency.append(now - item["t0"])


async def produce(server: ServerProcess, run: str, rate: float, seconds: float) -> int:
    info = run_info(run, pp=1, steps=10_000_000)
    template = records(info, 0)[0]
    sent = 0
    async with connect(server.ws + "/ws/ingest", additional_headers=AUTH) as ws:
        await ws.send(hello(info, 0))
        await ws.recv()
        drain = asyncio.create_task(_drain(ws))
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            await ws.send(record_frame(template | {"step": sent, "t0": time.time()}))
            sent += 1
            await asyncio.sleep(max(0.0, sent / rate - elapsed))
        await asyncio.sleep(1.5)  # let the last tick reach everyone
        drain.cancel()
    return sent


async def _drain(ws) -> None:
    async for _ in ws:
        pass


async def one(server: ServerProcess, n: int, rate: float, seconds: float) -> dict:
    run = f"fanout-{n}"
    viewers = [Viewer() for _ in range(n)]
    ready, counter = asyncio.Event(), [0]
    url = f"{server.ws}/ws/runs/{run}"
    tasks = [asyncio.create_task(v.watch(url, ready, counter, n)) for v in viewers]
    await asyncio.wait_for(ready.wait(), 120)
    sent = await produce(server, run, rate, seconds)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    got = [len(v.latency) / sent for v in viewers]
    lat = sorted(x for v in viewers for x in v.latency)
    return {
        "viewers": n,
        "sent": sent,
        "delivered_min": min(got),
        "delivered_mean": statistics.fmean(got),
        "gaps": sum(v.gaps for v in viewers),
        "p50_ms": 1e3 * lat[len(lat) // 2] if lat else float("nan"),
        "p99_ms": 1e3 * lat[int(len(lat) * 0.99)] if lat else float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--viewers", default="50,200,400")
    ap.add_argument("--rate", type=float, default=50.0, help="records per second")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "bench.sqlite3").start()
        try:
            print(f"{'viewers':>8} {'sent':>6} {'delivered min':>14} {'mean':>8} {'gaps':>5} "
                  f"{'p50 ms':>8} {'p99 ms':>8}")  # fmt: skip
            for n in (int(x) for x in args.viewers.split(",")):
                r = asyncio.run(one(server, n, args.rate, args.seconds))
                print(f"{r['viewers']:>8} {r['sent']:>6} {r['delivered_min']:>14.4f} "
                      f"{r['delivered_mean']:>8.4f} {r['gaps']:>5} {r['p50_ms']:>8.1f} "
                      f"{r['p99_ms']:>8.1f}", flush=True)  # fmt: skip
        finally:
            server.stop()


if __name__ == "__main__":
    main()
