"""Heavy-request benchmark (not a test): /healthz while the heaviest allowed requests run.

A real server starts in its own process (uvicorn on 127.0.0.1, a free port; settings from
the MESHSCOPE_ environment, as in production). /healthz is polled every 20 ms, first idle,
then while 4 heavy requests are fired at once, each from its own loopback address (4
clients, as the per-address share sees them); each heavy body is read to its end as sent
(gzip, as a browser asks). Printed side by side: healthz p50/p99 idle and under load, the
server's peak RSS (VmHWM), and each heavy request's status, bytes and seconds. Beside
healthz (a sync route, so each answer hops to the thread pool), a cached /api/scenario is
polled too: an async route answered on the event loop, i.e. the loop's own latency.

    python bench/bench_heavy.py [--mix traces|mixed|admitted|misses|runs|all] [--idle-s 3]
                                [--app-root OTHER_CHECKOUT]

Heavy sets: ``traces`` is 4 x /api/trace at the Scenario's bound (p=64, m=512, v=4: 393k
actions, ~190 MB of JSON); ``mixed`` is one trace, the flow page and /api/flow of the biggest
zb-h1 (p=32, m=4096) and the biggest plan the default bound allows (3,768 candidates).
``admitted`` (issue 26) is a compare of 4 scenarios at the bound, a scenario miss at the
bound, the biggest page of /api/runs/{run}/steps and the widest /analysis of a stored run
(pp=8, 900 micro-batches, 10 steps: ~7,200 events per record, near the per-record cap);
``misses`` is 4 different scenario misses at the bound; ``runs`` is the stored run's reads
alone (two pages of steps, two analyses). ``--app-root`` serves another
checkout (e.g. a ``git worktree`` of an older commit) for before/after figures.
Target (issue 13 item 6, issue 26 item 2): healthz p99 <= 50 ms under load, RSS <= 1 GB.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "live"))  # the probe-shaped records of the tests
TOKEN = "bench-heavy-token-" + "x" * 16
TARGET_P99_MS, TARGET_RSS_MB = 50.0, 1024.0
TRACE = ("/api/trace?schedule=interleaved&pp=64&microbatches=512&virtual_stages=4"
         "&layers=256&hidden=4096&heads=32&f_time=1&b_time=1&p2p_time=0.1")  # fmt: skip
ZB = "schedule=zb-h1&pp=32&microbatches=4096&f_time=1&b_time=1&w_time=0.5"
PLAN = "/api/plan?model=gpt3-175b&hardware=a100-80g&gpus=6144&global_batch=1536"
# An async route answered on the event loop (a cached scenario): the loop's own latency.
LOOP_PROBE = "/api/scenario"
BIGGEST = ("schedule=interleaved&pp=64&microbatches=512&virtual_stages=4&layers=256"
           "&hidden=4096&heads=32&f_time=1&b_time=1")  # fmt: skip


def miss(i: int) -> str:
    return f"/api/scenario?{BIGGEST}&p2p_time=0.1{i}"  # each its own cache key: a miss


COMPARE = "/api/compare?" + "&".join(f"s={quote(BIGGEST + f'&p2p_time=0.2{i}')}" for i in range(4))
RUN = "bench"
MIXES = {
    "traces": [TRACE] * 4,
    "mixed": [TRACE, f"/flow?{ZB}", f"/api/flow?{ZB}", PLAN],
    "admitted": [
        COMPARE,
        miss(9),
        f"/api/runs/{RUN}/steps?since=-1&limit=20000",
        f"/api/runs/{RUN}/analysis?window=50",
    ],  # fmt: skip
    "misses": [miss(i) for i in range(4)],
    # The stored run's own heavy reads, without the compare that takes every slot first.
    "runs": [
        f"/api/runs/{RUN}/steps?since=-1&limit=20000",
        f"/api/runs/{RUN}/analysis?window=50",
        f"/api/runs/{RUN}/steps?since=4&limit=20000",
        f"/api/runs/{RUN}/analysis?step=5&window=10",
    ],  # fmt: skip
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Server:
    """uvicorn --factory app.main:create_app in a subprocess, stopped by its own PID."""

    def __init__(self, db: Path, root: Path = ROOT) -> None:
        self.port = free_port()
        env = dict(os.environ, MESHSCOPE_DB=str(db), PYTHONPATH=str(root),
                   MESHSCOPE_INGEST_TOKEN=TOKEN)  # fmt: skip
        cmd = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--host",
               "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("server did not come up")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def poll(base: str, stop: threading.Event, out: list[float], path: str = "/healthz") -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        while not stop.is_set():
            t0 = time.perf_counter()
            client.get(path).raise_for_status()
            out.append(time.perf_counter() - t0)
            stop.wait(0.02)


def heavy(base: str, path: str, out: dict, source: str = "127.0.0.1") -> None:
    t0, size = time.perf_counter(), 0
    # From its own loopback address: another client, as the server's per-address share sees it.
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(base_url=base, timeout=600, transport=transport) as client, \
            client.stream("GET", path) as res:  # fmt: skip
        for piece in res.iter_raw():  # as sent (gzip): no client-side decompression cost
            size += len(piece)
        out.update(status=res.status_code, bytes=size, seconds=time.perf_counter() - t0,
                   retry_after=res.headers.get("retry-after"))  # fmt: skip


def sample_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], status_kib(pid, "VmRSS"))
        stop.wait(0.05)


def ms(samples: list[float], q: float) -> float:
    return 1000 * statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def pollers(base: str, stop: threading.Event) -> tuple[list[threading.Thread], list, list]:
    """/healthz (a sync route: a hop to the thread pool) and a cached /api/scenario (answered
    on the event loop itself), each polled every 20 ms."""
    health: list[float] = []
    loop: list[float] = []
    threads = [threading.Thread(target=poll, args=(base, stop, health)),
               threading.Thread(target=poll, args=(base, stop, loop, LOOP_PROBE))]  # fmt: skip
    return threads, health, loop


def run_mix(server: Server, name: str, idle_s: float) -> dict[str, float]:
    httpx.get(server.base + LOOP_PROBE, timeout=60).raise_for_status()  # cached from now on
    stop = threading.Event()
    threads, idle, idle_loop = pollers(server.base, stop)
    for t in threads:
        t.start()
    time.sleep(idle_s)
    stop.set()
    for t in threads:
        t.join()
    base_rss = status_kib(server.proc.pid, "VmRSS")
    results = [dict() for _ in MIXES[name]]
    stop, peak = threading.Event(), [0]
    threads, loaded, loaded_loop = pollers(server.base, stop)
    threads.append(threading.Thread(target=sample_rss, args=(server.proc.pid, stop, peak)))
    workers = [threading.Thread(target=heavy, args=(server.base, p, r, f"127.0.0.{10 + i}"))
               for i, (p, r) in enumerate(zip(MIXES[name], results, strict=True))]  # fmt: skip
    for t in threads + workers:
        t.start()
    t0 = time.perf_counter()
    for t in workers:
        t.join()
    wall = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join()
    print(f"\n== {name}: {len(workers)} heavy requests at once, {wall:.1f} s until the last")
    print(f"{'':24}{'idle':>10}{'under load':>12}")
    print(f"{'healthz p50 (ms)':24}{ms(idle, 50):>10.1f}{ms(loaded, 50):>12.1f}")
    print(f"{'healthz p99 (ms)':24}{ms(idle, 99):>10.1f}{ms(loaded, 99):>12.1f}")
    print(f"{'healthz max (ms)':24}{1000 * max(idle):>10.1f}{1000 * max(loaded):>12.1f}")
    print(f"{'healthz samples':24}{len(idle):>10}{len(loaded):>12}")
    print(f"{'loop probe p50 (ms)':24}{ms(idle_loop, 50):>10.1f}{ms(loaded_loop, 50):>12.1f}")
    print(f"{'loop probe p99 (ms)':24}{ms(idle_loop, 99):>10.1f}{ms(loaded_loop, 99):>12.1f}")
    print(f"{'server RSS (MB)':24}{base_rss / 1024:>10.0f}{peak[0] / 1024:>12.0f}  (peak sampled)")
    p99, rss = ms(loaded, 99), peak[0] / 1024
    print(f"target: healthz p99 <= {TARGET_P99_MS:.0f} ms: {p99:.1f} ms "
          f"({'met' if p99 <= TARGET_P99_MS else 'MISSED'}); RSS <= {TARGET_RSS_MB:.0f} MB: "
          f"{rss:.0f} MB ({'met' if rss <= TARGET_RSS_MB else 'MISSED'})")  # fmt: skip
    for path, r in zip(MIXES[name], results, strict=True):
        extra = f" retry-after {r['retry_after']}" if r.get("retry_after") else ""
        print(f"  {r.get('status')} {r.get('bytes', 0) / 1e6:7.1f} MB {r.get('seconds', 0):5.1f} s"
              f"  {path[:70]}{extra}")  # fmt: skip
    return {"healthz_p99_ms": ms(loaded, 99), "peak_rss_mb": peak[0] / 1024}


def ingest_run(server: Server) -> None:
    """A stored run for /steps and /analysis: pp=8, 900 micro-batches (each record ~7,200
    events, under its cap of 60,000 / 8), 10 steps, sent as the probe sends them."""
    from support import hello, record_frame, records, run_info
    from websockets.sync.client import connect

    info = run_info(RUN, pp=8, steps=10, m=900)
    url = f"ws://127.0.0.1:{server.port}/ws/ingest"
    steps = [records(info, step) for step in range(info.steps)]
    for rank in range(info.world_size):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with connect(url, additional_headers=auth, max_size=None) as ws:
            ws.send(hello(info, rank))
            assert '"ack"' in ws.recv(), "hello refused"
            for step in steps:
                ws.send(record_frame(step[rank]))
                assert '"ack"' in ws.recv(), "record refused"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mix", choices=[*MIXES, "all"], default="admitted")
    ap.add_argument("--idle-s", type=float, default=3.0)
    ap.add_argument("--app-root", type=Path, default=ROOT, help="the checkout to serve")
    args = ap.parse_args()
    names = list(MIXES) if args.mix == "all" else [args.mix]
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "bench.sqlite3", args.app_root.resolve())
        try:
            if "admitted" in names or "runs" in names:
                ingest_run(server)
            print(f"serving {args.app_root.resolve()}")
            for name in names:
                run_mix(server, name, args.idle_s)
            print(f"\nserver peak RSS over the whole run (VmHWM): "
                  f"{status_kib(server.proc.pid, 'VmHWM') / 1024:.0f} MB")  # fmt: skip
        finally:
            server.stop()


if __name__ == "__main__":
    main()
