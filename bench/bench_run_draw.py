"""First draw of a run's page at 64 and 1,024 ranks (issue 25's benchmark): a synthetic run
stored as imported runs are (probe-shaped records, one slow rank), opened in headless
Chromium at 1440 px; the server's first (uncached) analysis answer, the time from navigation
to the measured timeline on screen and to every chart drawn, with the analysis JSON's size,
side by side per world size. Not a test.

Past 64 ranks the timeline folds by pipeline stage (app/core/views/row_fold.py), so what
travels and draws grows with the stages and the outliers, not with the ranks.

    python bench/bench_run_draw.py [--ranks 64 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from support import TOKEN, ServerThread, get_json, records, run_info  # noqa: E402

from app.core.inputs.protocol import ProbeRecord  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
DRAWN = "document.getElementById('live-timeline')?.dataset.rows > 0"
ALL = "document.querySelector('[data-drawn-step]') !== null"


def store(app, ranks: int) -> str:
    """A run of ``ranks`` ranks (dp x tp 4 x pp 2), two steps, rank 5 slow."""
    run = f"draw{ranks}"
    info = run_info(run, dp=ranks // 8, tp=4, pp=2, steps=2)
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(2):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0))
                for r in records(info, step, t0=1000.0 + step, slow_rank=5)]  # fmt: skip
    app.state.live.store.transaction(ops)
    return run


def open_once(browser, url: str) -> tuple[float, float, int]:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_function(DRAWN, timeout=300_000)
        first = time.perf_counter() - start
        page.wait_for_function(ALL, timeout=300_000)
        rows = int(page.locator("#live-timeline").get_attribute("data-rows"))
        return first, time.perf_counter() - start, rows
    finally:
        page.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[64, 1024])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(db=Path(tmp) / "d.sqlite3", ingest_token=TOKEN))
        with ServerThread(app) as server, sync_playwright() as pw:
            base = server.base
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            print("| ranks | rows drawn | analysis JSON | analysis served s | first draw s | "
                  "all drawn s |")  # fmt: skip
            print("|---|---|---|---|---|---|")
            for ranks in args.ranks:
                run = store(app, ranks)
                start = time.perf_counter()  # the server's first answer: nothing cached
                size = len(str(get_json(base, f"/api/runs/{run}/analysis?step=1")))
                served = time.perf_counter() - start
                times = [open_once(browser, f"{base}/runs/{run}") for _ in range(args.repeat)]
                first = statistics.median(t[0] for t in times)
                done = statistics.median(t[1] for t in times)
                print(f"| {ranks} | {times[0][2]} | {size / 1e6:.2f} MB | {served:.2f} | "
                      f"{first:.2f} | {done:.2f} |")  # fmt: skip
            browser.close()


if __name__ == "__main__":
    main()
