"""Ingest throughput benchmark (not a test): rank-steps stored per second.

A server runs in its own process; this process opens one producer websocket per simulated
rank and streams probe-shaped records (app.core.schedules simulated for the mesh, TP pulses,
receives, sends, dp, optim) as fast as the server takes them, keeping up to ``--window``
records per rank unacknowledged. Throughput counts only what the server acknowledged, i.e.
committed (synchronous=FULL, group commit).

    python bench/bench_ingest.py [--steps 200] [--window 64]

Meshes: 8 ranks = dp2 x tp2 x pp2 (1f1b, m=4); 64 ranks = dp4 x tp4 x pp4 (1f1b, m=8).
Each producer connection is also rate-capped by the server (LiveConfig.rate_frames_per_s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from support import TOKEN, ServerProcess, get_json, hello, records, run_info  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

AUTH = {"Authorization": f"Bearer {TOKEN}"}
MESHES = {8: dict(dp=2, tp=2, pp=2, m=4), 64: dict(dp=4, tp=4, pp=4, m=8)}


async def rank_stream(url: str, info, rank: int, rec: dict, steps: int, window: int) -> None:
    async with connect(url, additional_headers=AUTH, max_size=None) as ws:
        await ws.send(hello(info, rank))
        await ws.recv()
        head = '{"type":"record","record":'
        acked, sent = -1, 0
        while acked < steps - 1:
            while sent < steps and sent - acked <= window:
                await ws.send(head + json.dumps(rec | {"step": sent}) + "}")
                sent += 1
            reply = json.loads(await ws.recv())
            if reply["type"] == "ack":
                acked = max(acked, reply["step"])


async def one(server: ServerProcess, ranks: int, steps: int, window: int) -> dict:
    mesh = MESHES[ranks]
    info = run_info(f"ingest-{ranks}", dp=mesh["dp"], tp=mesh["tp"], pp=mesh["pp"],
                    m=mesh["m"], steps=steps)  # fmt: skip
    template = records(info, 0, t0=1.0e9)
    size = sum(len(json.dumps(r)) for r in template) / ranks
    url = server.ws + "/ws/ingest"
    start = time.perf_counter()
    await asyncio.gather(
        *(rank_stream(url, info, r, template[r], steps, window) for r in range(ranks))
    )
    seconds = time.perf_counter() - start
    stored = get_json(server.base, f"/api/runs/{info.run}")["trend"]
    assert sum(p["ranks"] for p in stored) == ranks * steps, "not everything was stored"
    return {"ranks": ranks, "records": ranks * steps, "seconds": seconds, "bytes": size,
            "events": len(template[0]["events"])}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200, help="steps per rank")
    ap.add_argument("--window", type=int, default=64, help="unacked records per rank")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "bench.sqlite3").start()
        try:
            print(f"{'ranks':>6} {'records':>8} {'events/rec':>10} {'KB/rec':>7} {'seconds':>8} "
                  f"{'rank-steps/s':>13} {'steps/s':>8}")  # fmt: skip
            for ranks in MESHES:
                steps = args.steps if ranks <= 8 else max(args.steps // 4, 10)
                r = asyncio.run(one(server, ranks, steps, args.window))
                rate = r["records"] / r["seconds"]
                print(f"{r['ranks']:>6} {r['records']:>8} {r['events']:>10} "
                      f"{r['bytes'] / 1e3:>7.1f} {r['seconds']:>8.2f} {rate:>13.0f} "
                      f"{rate / ranks:>8.1f}", flush=True)  # fmt: skip
        finally:
            server.stop()


if __name__ == "__main__":
    main()
