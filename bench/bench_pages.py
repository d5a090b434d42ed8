"""Pages side by side: time to first drawn overview, our JS+CSS bytes, /api/scenario latency.

Not a test: prints numbers. Starts its own server on a free loopback port, stops it, and
bounds every loop (requests and wall time), so it always ends.

    python bench/bench_pages.py [--requests 1000] [--clients 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests import asset_budget  # noqa: E402
from tests.browser.conftest import ARGS, CHROMIUM, ServerThread  # noqa: E402
from tests.live.support import ServerProcess  # noqa: E402

WORLDS = {8: "dp=2&tp=2&pp=2", 1024: "dp=16&tp=8&pp=8", 16384: "dp=256&tp=8&pp=8"}


def first_draw_ms(base: str, runs: int = 3) -> dict[int, float]:
    """Navigation start -> the grid drawn (the page's own performance mark), median of runs."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        for world, query in WORLDS.items():
            samples = []
            for _ in range(runs):
                page = ctx.new_page()
                page.goto(f"{base}/?{query}", wait_until="domcontentloaded")
                page.wait_for_selector("body[data-ready=overview]", timeout=60_000)
                mark = "performance.getEntriesByName('meshscope:grid-drawn')[0].startTime"
                samples.append(page.evaluate(mark))
                page.close()
            out[world] = statistics.median(samples)
        browser.close()
    return out


PAGES = ("/", "/flow", "/compare", "/trend", "/plan", "/runs", "/runs/any")


def own_bytes() -> int:
    files = [*ROOT.glob("static/js/*.js"), *ROOT.glob("static/css/*.css")]
    return sum(f.stat().st_size for f in files)


def page_bytes(base: str) -> dict[str, int]:
    """Our JS+CSS each page loads: its modules, their imports, its stylesheets."""
    import httpx

    return {p: asset_budget.page_bytes(httpx.get(base + p, timeout=30).text) for p in PAGES}


async def _latency(base: str, clients: int, requests: int, budget_s: float) -> list[float]:
    import httpx

    url = f"{base}/api/scenario?{WORLDS[1024]}"
    times: list[float] = []
    deadline = time.monotonic() + budget_s
    remaining = iter(range(requests))

    async def client(http: httpx.AsyncClient) -> None:
        for _ in remaining:
            if time.monotonic() > deadline:
                return
            t0 = time.perf_counter()
            res = await http.get(url)
            res.raise_for_status()
            times.append(time.perf_counter() - t0)

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    return times


def _latency_of_server(threads: int, args: argparse.Namespace) -> list[float]:
    os.environ["MESHSCOPE_COMPUTE_THREADS"] = str(threads)
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "bench.sqlite3").start()
        try:
            return asyncio.run(_latency(server.base, args.clients, args.requests, args.budget_s))
        finally:
            server.stop()
            del os.environ["MESHSCOPE_COMPUTE_THREADS"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--budget-s", type=float, default=60.0)
    args = ap.parse_args()
    with ServerThread(create_app(Settings())) as base:
        draws = first_draw_ms(base)
        per_page = page_bytes(base)
    # The latency server runs in its own process, as `meshscope serve` does: in this one it
    # would share a GIL with the load-generating client and measure both. Side by side: our
    # thread count for sync routes, and anyio's default of 40.
    lat = {n: _latency_of_server(n, args) for n in (Settings().compute_threads, 40)}
    print("time to first drawn overview (headless Chromium, median of 3):")
    for world, ms in draws.items():
        print(f"  {world:>6} ranks  {ms:8.0f} ms")
    print(f"own JS+CSS, all files: {own_bytes():,} bytes; what each page loads (limit 100,000):")
    for path, size in per_page.items():
        print(f"  {path:<10} {size:>8,} bytes")
    print(f"/api/scenario 1024 GPUs, {args.clients} concurrent clients, server in its own process:")
    for threads, times in lat.items():
        print(
            f"  {threads:>3} threads for sync routes, {len(times)} requests: "
            f"p50 {pct(times, 0.5) * 1e3:.0f} ms  p99 {pct(times, 0.99) * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    main()
