"""The comparison page at real sizes, side by side in one run (issue 28, "fast at real sizes"):
headless Chromium's time from navigation to the page drawn (its own data-ready mark), and
the DOM it built, for

  - /compare of the issue's URL (schedules preset, pp=16, 256 micro-batches, v=2, 405B),
    on this tree and on a previous revision's (Plotly SVG timelines before 28's canvas);
  - /flow of the same scenario, which draws one timeline.

Not a test: prints numbers. Each server runs in its own process on a free loopback port and
is stopped by its PID; every page load is bounded by a timeout.

    python bench/bench_compare_draw.py [--previous REV ...] [--runs 3]

The defaults compare against b3c5b8a (Plotly SVG timelines) and a4c4bf0 (canvas timelines,
the whole comparison embedded in the page; since then a big preset's page comes at once and
its columns stream in as lines, each drawn as it comes).

Target: first draw <= 2 s for the compare URL on this 2-core box.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.revision import unpack  # noqa: E402
from tests.browser.conftest import ARGS, CHROMIUM  # noqa: E402
from tests.live.support import free_port  # noqa: E402

BASE = "pp=16&microbatches=256&virtual_stages=2&model=llama3-405b&dp=8&tp=8"
PAGES = {
    "compare": f"/compare?preset=schedules&{BASE}",
    "compare pp=8 m=64": "/compare?preset=schedules&pp=8&microbatches=64&virtual_stages=2"
    "&model=llama3-405b&dp=8&tp=8",
    "flow": f"/flow?schedule=interleaved&{BASE}",
}
TARGET_S = 2.0
DOM = "document.getElementsByTagName('*').length"


def serve(tree: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, MESHSCOPE_INGEST_TOKEN="b" * 32, PYTHONPATH=str(tree))
    db = Path(tempfile.mkdtemp()) / "bench.sqlite3"
    cmd = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port",
           str(port), "--db", str(db)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urlopen(f"{base}/healthz", timeout=1):
                pass
            # Warm: the accuracy board every page's bands read is built on a server's first
            # page (seconds); a running server has it, so no timed load should pay for it.
            with urlopen(f"{base}/api/fidelity", timeout=120):
                return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server from {tree} did not come up")


# The page's own marks, in ms from navigation start: the first drawing (compare: the first
# column's timeline, or on a revision without that mark every column and timeline, before
# Plotly's charts; flow: the grid), and the page's response arriving.
FIRST = {
    "compare": ("meshscope:compare-first", "meshscope:compare-drawn"),
    "flow": ("meshscope:grid-drawn",),
}
MARK = "performance.getEntriesByName('{}')[0]?.startTime ?? null"
SERVED = "performance.getEntriesByType('navigation')[0].responseStart"


def draw_s(browser, url: str, ready: str, runs: int) -> dict[str, float]:
    """Medians over runs, in seconds from navigation start: the response, the first drawing
    (None where the page has no such mark: the SVG revision), every chart drawn (data-ready),
    and the DOM's element count."""
    rows = []
    for _ in range(runs):
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=180_000)
        page.wait_for_selector(f"body[data-ready={ready}]", timeout=180_000)
        done = time.perf_counter() - t0
        marks = (page.evaluate(MARK.format(name)) for name in FIRST[ready])
        first = next((m for m in marks if m is not None), None)
        served = page.evaluate(SERVED) / 1e3
        rows.append((served, None if first is None else first / 1e3, done, page.evaluate(DOM)))
        page.close()
    med = [statistics.median(v) if None not in v else None for v in zip(*rows, strict=True)]
    return dict(zip(("served", "first", "done", "dom"), med, strict=True))


def measure(base: str, runs: int, names: tuple[str, ...]) -> dict[str, tuple[float, int]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            return {n: draw_s(browser, base + PAGES[n], n.split()[0], runs) for n in names}
        finally:
            browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", nargs="*", default=["b3c5b8a", "a4c4bf0"],
                    help="revisions to measure beside this tree")  # fmt: skip
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    results: dict[str, dict[str, tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        old_pages = ("compare", "compare pp=8 m=64")
        trees = [("this tree", ROOT, tuple(PAGES))] + [
            (rev, unpack(rev, Path(tmp) / rev), old_pages) for rev in args.previous
        ]
        for label, tree, names in trees:
            proc, base = serve(tree)
            try:
                results[label] = measure(base, args.runs, names)
            finally:
                proc.kill()
                proc.wait()
    print(f"seconds from navigation, headless Chromium at 1440 px, median of {args.runs}:")
    print(
        f"  {'tree':<12} {'page':<18} {'served':>7} {'first draw':>10} {'all drawn':>9} {'DOM':>9}"
    )
    for label, rows in results.items():
        for name, r in rows.items():
            first = "—" if r["first"] is None else f"{r['first']:.2f}"
            print(f"  {label:<12} {name:<18} {r['served']:7.2f} {first:>10} {r['done']:9.2f} "
                  f"{r['dom']:9,.0f}")  # fmt: skip
    new, flow = results["this tree"]["compare"], results["this tree"]["flow"]
    for rev in args.previous:
        old = results[rev]["compare"]
        first = "" if old["first"] is None else f", first draw {old['first'] / new['first']:.1f}x"
        print(f"compare against {rev}: all drawn {old['done'] / new['done']:.1f}x faster{first}")
    print(
        f"compare, all drawn: {new['done'] / flow['done']:.2f}x /flow's time; first draw "
        f"{new['first']:.2f} s, target <= {TARGET_S} s: "
        f"{'met' if new['first'] <= TARGET_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
