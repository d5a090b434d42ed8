"""Ingest throughput benchmark (not a test): rank-steps stored per second, and the server's
CPU time per stored record.

A server runs in its own process; this process opens one producer websocket per simulated
rank and streams probe-shaped records (app.core.schedules simulated for the mesh, TP pulses,
receives, sends, dp, optim) as fast as the server takes them, keeping up to ``--window``
records per rank unacknowledged. Throughput counts only what the server acknowledged, i.e.
committed (synchronous=FULL, group commit). The server's CPU seconds (user + system, every
thread, from /proc/PID/stat) over the same window give records per server CPU-second: on a
machine shared with the producers that is the figure that says what one server core takes,
where wall-clock throughput says how fast this machine's cores were shared.

    python bench/bench_ingest.py [--steps 200] [--window 64] [--ranks 8,64,1024]
                                 [--batch 16] [--baseline DIR]

Each mesh runs twice against this checkout's server: one record per frame (``this/1``, a
probe reporting each step as it ends) and ``--batch`` consecutive records of a rank per
``records`` frame (``this/16``: a spool replayed after an outage, an upload, or a node
agent's forwarding), printed side by side.

``--baseline DIR`` also runs each mesh against a server started from DIR (another
checkout, e.g. ``git archive <commit> | tar -x -C DIR``) first, one record per frame and
``--batch`` records per frame (``before/1``, ``before/16``), and prints the ratios of the
same framing: a before/after on the same machine within minutes.

Meshes: 8 ranks = dp2 x tp2 x pp2 (1f1b, m=4); 64 ranks = dp4 x tp4 x pp4 (1f1b, m=8);
1,024 ranks = dp32 x tp4 x pp8 (1f1b, m=4; 26-34 events a record, rank 0's 26 printed, under
the 58 a record of a 1,024-rank run may carry). A mesh past 8 ranks runs --steps / 4 (64) or
/ 10 (1,024) steps: the cost grows with the database, so final figures take --steps 1000.
Each producer connection is also rate-capped by the server (LiveConfig.rate_frames_per_s).
Issue 26 item 11's target: >= 20,000 records per server CPU-second at 1,024 ranks (4,416
records/s wall was the audit's figure at 16 ranks). Measured with --ranks 1024 --steps 1000
--baseline 34d3519's tree on the 2-core dev box (load ~2.5, two runs): one record per frame
11,770-12,978 -> 15,081-15,329 records per server CPU-second, records frames of 16
15,193-16,358 -> 19,542-19,961 (docs/live.md, "Ingest throughput").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
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
MESHES = {
    8: dict(dp=2, tp=2, pp=2, m=4),
    64: dict(dp=4, tp=4, pp=4, m=8),
    1024: dict(dp=32, tp=4, pp=8, m=4),
}
TARGET_PER_CPU_S = 20_000
IDLE_S = 5.0
TICK_S = os.sysconf("SC_CLK_TCK")


class Server(ServerProcess):
    """The test helper's server, allowed every producer of the bench from one address,
    run from the checkout at ``root`` (this one unless --baseline names another)."""

    def __init__(self, db: Path, root: Path = ROOT) -> None:
        super().__init__(db)
        self.root = root

    def start(self) -> Server:
        env = dict(os.environ, MESHSCOPE_INGEST_TOKEN=self.token, PYTHONPATH=str(self.root),
                   MESHSCOPE_CLIENT_CONNECTIONS="100000")  # fmt: skip
        cmd = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1",
               "--port", str(self.port), "--db", str(self.db)]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, cwd=self.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for _ in range(600):
            if self._healthy():
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("server subprocess did not come up")

    def cpu_s(self) -> float:
        """User + system seconds of the server process, all its threads (proc(5) fields 14-15)."""
        return _ticks(Path(f"/proc/{self.proc.pid}/stat")) / TICK_S

    def loop_cpu_s(self) -> float:
        """The same of its main thread alone: the event loop (sockets, decoding, acks, fan-out);
        the rest is the store's writer thread and the executor's (proc(5): task/TID/stat)."""
        return _ticks(Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/stat")) / TICK_S


def _ticks(stat: Path) -> int:
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def open_rank(url: str, info, rank: int, gate: asyncio.Semaphore):
    """Connected and said hello (its ack read): a few handshakes at a time, so a thousand
    producers starting together do not time out on a small machine."""
    async with gate:
        ws = await connect(
            url, additional_headers=AUTH, max_size=None, open_timeout=120, ping_interval=None
        )
        await ws.send(hello(info, rank))
        await ws.recv()
    return ws


async def rank_stream(ws, rec: dict, steps: int, window: int, batch: int) -> None:
    # The record encoded once; each step only splices its number in (producer CPU is not
    # what is measured, and it shares the machine with the server).
    before, after = json.dumps(rec | {"step": -7}).split("-7", 1)
    acked, sent = -1, 0
    while acked < steps - 1:
        while sent < steps and sent - acked <= window:
            n = min(batch, steps - sent)
            recs = [f"{before}{s}{after}" for s in range(sent, sent + n)]
            if batch == 1:
                await ws.send(f'{{"type":"record","record":{recs[0]}}}')
            else:
                await ws.send('{"type":"records","records":[' + ",".join(recs) + "]}")
            sent += n
        reply = json.loads(await ws.recv())
        if reply["type"] == "ack":
            acked = max(acked, reply["step"])
    await ws.close()


async def one(server: Server, ranks: int, steps: int, window: int, batch: int) -> dict:
    mesh = MESHES[ranks]
    info = run_info(f"ingest-{ranks}", dp=mesh["dp"], tp=mesh["tp"], pp=mesh["pp"],
                    m=mesh["m"], steps=steps)  # fmt: skip
    template = records(info, 0, t0=1.0e9)
    size = sum(len(json.dumps(r)) for r in template) / ranks
    url, gate = server.ws + "/ws/ingest", asyncio.Semaphore(32)
    sockets = await asyncio.gather(*(open_rank(url, info, r, gate) for r in range(ranks)))
    # The server's CPU with every producer connected and silent (liveness sweeps, hub ticks,
    # each O(ranks)): a cost per second, not per record, paid however fast records come.
    idle_cpu = server.cpu_s()
    await asyncio.sleep(IDLE_S)
    idle_rate = (server.cpu_s() - idle_cpu) / IDLE_S
    # Timed from the first record to the last ack: records only, not the handshakes.
    start, cpu, loop = time.perf_counter(), server.cpu_s(), server.loop_cpu_s()
    await asyncio.gather(
        *(rank_stream(ws, template[r], steps, window, batch) for r, ws in enumerate(sockets))
    )
    seconds, cpu = time.perf_counter() - start, server.cpu_s() - cpu
    loop = server.loop_cpu_s() - loop
    stored = get_json(server.base, f"/api/runs/{info.run}")["trend"]
    assert sum(p["ranks"] for p in stored) == ranks * steps, "not everything was stored"
    return {"ranks": ranks, "records": ranks * steps, "seconds": seconds, "bytes": size,
            "events": len(template[0]["events"]), "cpu": cpu, "loop": loop,
            "marginal_cpu": max(cpu - idle_rate * seconds, 1e-9)}  # fmt: skip


def _line(label: str, r: dict) -> str:
    rate, per_cpu = r["records"] / r["seconds"], r["records"] / r["cpu"]
    marginal = r["records"] / r["marginal_cpu"]  # less the idle server's CPU
    target = f"{TARGET_PER_CPU_S:>8}" if r["ranks"] >= 1024 else f"{'':>8}"

    def us(cpu_s: float) -> float:  # CPU microseconds per stored record
        return cpu_s / r["records"] * 1e6

    return (f"{label:>8} {r['ranks']:>6} {r['records']:>8} {r['events']:>10} "
            f"{r['bytes'] / 1e3:>7.1f} {r['seconds']:>8.2f} {rate:>13.0f} "
            f"{rate / r['ranks']:>8.1f} {r['cpu']:>12.2f} {per_cpu:>10.0f} "
            f"{marginal:>9.0f} {target} {us(r['loop']):>8.0f} "
            f"{us(r['cpu'] - r['loop']):>8.0f}")  # fmt: skip


def _measure(root: Path, ranks: int, steps: int, window: int, batch: int) -> dict:
    """One mesh against a fresh server (and database) from the checkout at ``root``."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "bench.sqlite3", root).start()
        try:
            return asyncio.run(one(server, ranks, steps, window, batch))
        finally:
            server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200, help="steps per rank")
    ap.add_argument("--window", type=int, default=64, help="unacked records per rank")
    ap.add_argument("--ranks", default="8,64,1024", help="meshes to run, of " + str(list(MESHES)))
    ap.add_argument("--batch", type=int, default=16, help="records per records frame")
    ap.add_argument("--baseline", type=Path, help="another checkout to measure first")
    args = ap.parse_args()
    # One socket per simulated rank, in this process.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))
    print(f"{'server':>8} {'ranks':>6} {'records':>8} {'events/rec':>10} {'KB/rec':>7} "
          f"{'seconds':>8} {'rank-steps/s':>13} {'steps/s':>8} {'server CPU s':>12} "
          f"{'rec/CPU-s':>10} {'marginal':>9} {'target':>8} {'loop us':>8} "
          f"{'other us':>8}")  # fmt: skip
    single, batched = "this/1", f"this/{args.batch}"
    runs = [(single, ROOT, 1), (batched, ROOT, args.batch)]
    before_single, before_batched = "before/1", f"before/{args.batch}"
    if args.baseline:
        runs[:0] = [(before_single, args.baseline, 1), (before_batched, args.baseline, args.batch)]
    for ranks in (int(r) for r in args.ranks.split(",")):
        steps = args.steps if ranks <= 8 else max(args.steps // (4 if ranks <= 64 else 10), 10)
        got = {}
        for label, root, batch in runs:
            got[label] = _measure(root, ranks, steps, args.window, batch)
            print(_line(label, got[label]), flush=True)
        _ratio(f"{batched} vs {single}", ranks, got[single], got[batched])
        if args.baseline:
            _ratio(f"{single} vs {before_single}", ranks, got[before_single], got[single])
            _ratio(f"{batched} vs {before_batched}", ranks, got[before_batched], got[batched])


def _ratio(what: str, ranks: int, before: dict, now: dict) -> None:
    """Same records on both sides: the ratio of CPU seconds is that of records per CPU-s."""
    print(f"{'ratio':>8} {ranks:>6}  {what}: records per server CPU-second x"
          f"{before['cpu'] / now['cpu']:.2f}, wall x"
          f"{before['seconds'] / now['seconds']:.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
