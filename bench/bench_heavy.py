"""Heavy-request benchmark (not a test): /healthz while the heaviest allowed requests run.

A real server starts in its own process (uvicorn on 127.0.0.1, a free port; settings from
the MESHSCOPE_ environment, as in production). /healthz is polled every 20 ms, first idle,
then while 4 heavy requests are fired at once, each from its own loopback address (4
clients, as the per-address share sees them); each heavy body is read to its end as sent
(gzip, as a browser asks). Printed side by side: healthz p50/p99 idle and under load, the
server's peak RSS (VmHWM), and each heavy request's status, bytes and seconds. Beside
healthz (a sync route, so each answer hops to the thread pool), a cached /api/scenario is
polled too: an async route answered on the event loop, i.e. the loop's own latency.

    python bench/bench_heavy.py [--mix traces|mixed|admitted|misses|pages|runs|all] [--idle-s 3]
                                [--app-root OTHER_CHECKOUT] [--baseline GIT_REF]

Heavy sets: ``traces`` is 4 x /api/trace at the Scenario's bound (p=64, m=512, v=4: 393k
actions, ~190 MB of JSON); ``mixed`` is one trace, the flow page and /api/flow of the biggest
zb-h1 (p=32, m=4096) and the biggest plan the default bound allows (3,768 candidates).
``admitted`` (issue 26) is a compare of 4 scenarios at the bound, a scenario miss at the
bound, the biggest page of /api/runs/{run}/steps and the widest /analysis of a stored run
(pp=8, 900 micro-batches, 10 steps: ~7,200 events per record, near the per-record cap);
``misses`` is 4 different scenario misses at the bound; ``runs`` is the stored run's reads
alone (two pages of steps, two analyses). ``--app-root`` serves another
checkout (e.g. a ``git worktree`` of an older commit); ``--baseline REF`` serves ``git
archive REF`` first, then this checkout, on the same box back to back, and prints both side
by side. RSS is the server's own and its children's (the heavy worker processes and their
forkserver, app/api/pool.py), each peak sampled; PSS (shared pages split between processes)
is printed beside their sum, since forked workers share their parent's imported code.
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
    # The pages that evaluate what they embed: two overview misses, the planner's page, a flow.
    "pages": [
        f"/?{BIGGEST}&p2p_time=0.31",
        f"/?{BIGGEST}&p2p_time=0.32",
        PLAN.replace("/api/plan", "/plan"),
        f"/flow?{ZB}",
    ],  # fmt: skip
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


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (the heavy workers and their forkserver)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system), 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """peak: [server RSS, children's RSS summed, server + children RSS, their PSS], KiB."""
    while not stop.is_set():
        kids = children(pid)
        own = status_kib(pid, "VmRSS")
        theirs = sum(status_kib(k, "VmRSS") for k in kids if Path(f"/proc/{k}").exists())
        pss = pss_kib(pid) + sum(pss_kib(k) for k in kids)
        for i, value in enumerate((own, theirs, own + theirs, pss)):
            peak[i] = max(peak[i], value)
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
    idle_cpu0 = cpu_s(server.proc.pid)
    for t in threads:
        t.start()
    time.sleep(idle_s)
    stop.set()
    for t in threads:
        t.join()
    # The server's CPU per poll answered, idle: what the pollers alone cost it under load too.
    per_poll = (cpu_s(server.proc.pid) - idle_cpu0) / max(1, len(idle) + len(idle_loop))
    base_rss = status_kib(server.proc.pid, "VmRSS")
    results = [dict() for _ in MIXES[name]]
    stop, peak = threading.Event(), [0, 0, 0, 0]
    threads, loaded, loaded_loop = pollers(server.base, stop)
    threads.append(threading.Thread(target=sample_rss, args=(server.proc.pid, stop, peak)))
    workers = [threading.Thread(target=heavy, args=(server.base, p, r, f"127.0.0.{10 + i}"))
               for i, (p, r) in enumerate(zip(MIXES[name], results, strict=True))]  # fmt: skip
    cpu0 = cpu_s(server.proc.pid)
    kids0 = {k: cpu_s(k) for k in children(server.proc.pid)}
    for t in threads + workers:
        t.start()
    t0 = time.perf_counter()
    for t in workers:
        t.join()
    wall = time.perf_counter() - t0
    # CPU the server itself spent meanwhile (its event loop and threads) and its children's
    # (workers that lived through the mix; one killed meanwhile is not counted).
    server_cpu = cpu_s(server.proc.pid) - cpu0
    kids_cpu = sum(cpu_s(k) - kids0.get(k, 0.0) for k in children(server.proc.pid))
    stop.set()
    for t in threads:
        t.join()
    return {
        "wall_s": wall, "idle": idle, "loaded": loaded, "idle_loop": idle_loop,
        "loaded_loop": loaded_loop, "base_rss": base_rss, "peak": peak, "results": results,
        "server_cpu": server_cpu, "kids_cpu": kids_cpu,
        "heavy_cpu": server_cpu - per_poll * (len(loaded) + len(loaded_loop)),
    }  # fmt: skip


ROWS = [
    ("healthz p50 (ms)", lambda r: ms(r["loaded"], 50)),
    ("healthz p99 (ms)", lambda r: ms(r["loaded"], 99)),
    ("healthz max (ms)", lambda r: 1000 * max(r["loaded"])),
    ("healthz samples", lambda r: len(r["loaded"])),
    ("loop probe p99 (ms)", lambda r: ms(r["loaded_loop"], 99)),
    ("idle healthz p99 (ms)", lambda r: ms(r["idle"], 99)),
    ("server RSS peak (MB)", lambda r: r["peak"][0] / 1024),
    ("children RSS peak (MB)", lambda r: r["peak"][1] / 1024),
    ("server+children RSS (MB)", lambda r: r["peak"][2] / 1024),
    ("server+children PSS (MB)", lambda r: r["peak"][3] / 1024),
    ("server CPU (s)", lambda r: r["server_cpu"]),
    # The server's CPU less what its pollers cost it idle: the heavy work it did itself,
    # holding its GIL (the event loop's) for most of it.
    ("server CPU, heavy (s)", lambda r: r["heavy_cpu"]),
    ("children CPU (s)", lambda r: r["kids_cpu"]),
    ("until the last (s)", lambda r: r["wall_s"]),
]


def report(name: str, runs: dict[str, dict]) -> None:
    """One mix's figures, one column per served tree (before/after), then each request."""
    labels = list(runs)
    print(f"\n== {name}: {len(MIXES[name])} heavy requests at once, under load")
    print(f"{'':26}" + "".join(f"{label:>14}" for label in labels))
    for row, value in ROWS:
        print(f"{row:26}" + "".join(f"{value(runs[label]):>14.1f}" for label in labels))
    for label in labels:
        r = runs[label]
        p99, rss = ms(r["loaded"], 99), r["peak"][2] / 1024
        print(f"{label}: healthz p99 <= {TARGET_P99_MS:.0f} ms: {p99:.1f} ms "
              f"({'met' if p99 <= TARGET_P99_MS else 'MISSED'}); server+children RSS <= "
              f"{TARGET_RSS_MB:.0f} MB: {rss:.0f} MB "
              f"({'met' if rss <= TARGET_RSS_MB else 'MISSED'})")  # fmt: skip
        for path, res in zip(MIXES[name], r["results"], strict=True):
            extra = f" retry-after {res['retry_after']}" if res.get("retry_after") else ""
            print(f"  {res.get('status')} {res.get('bytes', 0) / 1e6:7.1f} MB "
                  f"{res.get('seconds', 0):5.1f} s  {path[:64]}{extra}")  # fmt: skip


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


def serve_all(root: Path, names: list[str], idle_s: float) -> dict[str, dict]:
    """Every mix on one server of ``root``, with the stored run when a mix reads it."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "bench.sqlite3", root)
        try:
            if "admitted" in names or "runs" in names:
                ingest_run(server)
            print(f"serving {root}", flush=True)
            out = {name: run_mix(server, name, idle_s) for name in names}
            print(f"server peak RSS over the whole run (VmHWM): "
                  f"{status_kib(server.proc.pid, 'VmHWM') / 1024:.0f} MB", flush=True)  # fmt: skip
            return out
        finally:
            server.stop()


def archived(ref: str, into: Path) -> Path:
    """``git archive ref`` unpacked under ``into``: the tree to serve as the baseline."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                         capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mix", choices=[*MIXES, "all"], default="admitted")
    ap.add_argument("--idle-s", type=float, default=3.0)
    ap.add_argument("--app-root", type=Path, default=ROOT, help="the checkout to serve")
    ap.add_argument("--baseline", help="a git ref served first, for before/after columns")
    args = ap.parse_args()
    names = list(MIXES) if args.mix == "all" else [args.mix]
    runs: dict[str, dict[str, dict]] = {name: {} for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        trees = [(args.baseline, archived(args.baseline, Path(tmp)))] if args.baseline else []
        trees.append(("this tree" if args.baseline else "served", args.app_root.resolve()))
        for label, root in trees:
            for name, result in serve_all(root, names, args.idle_s).items():
                runs[name][label] = result
    for name in names:
        report(name, runs[name])


if __name__ == "__main__":
    main()
