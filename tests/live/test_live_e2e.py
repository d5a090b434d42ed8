"""End to end: a real DP=2 x TP=2 x PP=2 CPU probe run streams to a real server while
Chromium watches /runs/{run}: every rank's every step arrives and the page draws it."""

import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, TOKEN, ServerProcess, all_steps, get_json, probe_env

pytestmark = [pytest.mark.probe, pytest.mark.browser, pytest.mark.timeout(300)]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
SHOTS = ROOT / "screenshots"
RUN, STEPS, WORLD = "e2e-live", 6, 8


def _probe(server: ServerProcess, out: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "gpu_probe", "--dp", "2", "--tp", "2", "--pp", "2",
           "--schedule", "1f1b", "--microbatches", "4", "--steps", str(STEPS),
           "--server", server.ws + "/ws/ingest", "--token", TOKEN, "--run-name", RUN,
           "--out", str(out), "--quiet"]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=probe_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip


def test_a_real_probe_run_arrives_whole_and_is_drawn(tmp_path):
    pytest.importorskip("torch")
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium at /usr/bin/chromium")
    server = ServerProcess(tmp_path / "live.sqlite3").start()
    probe = None
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            urls, errors = [], []
            page.on("request", lambda r: urls.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.goto(f"{server.base}/runs/{RUN}")  # opened before the run exists
            probe = _probe(server, tmp_path / "out")
            output, _ = probe.communicate(timeout=240)
            assert probe.returncode == 0, output[-3000:]
            page.wait_for_function(
                f"""() => document.body.dataset.stepsComplete === '{STEPS}'
                    && document.body.dataset.complete === 'true'
                    && document.body.dataset.drawnStep === '{STEPS - 1}'""",
                timeout=60_000,
            )
            timeline = page.locator("#live-timeline")
            assert timeline.get_attribute("data-rows") == str(WORLD)
            assert timeline.get_attribute("data-ranks-drawn") == str(WORLD)
            assert int(timeline.get_attribute("data-links")) > 0
            # The trend appends asynchronously after the step lands; give it a moment.
            page.wait_for_function(
                f"document.getElementById('trend').dataset.points === '{STEPS}'", timeout=10_000
            )
            assert page.locator("#bubble-chart").get_attribute("data-ranks") == str(WORLD)
            SHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SHOTS / "live_e2e.png"), full_page=True)
            # The same run in Chinese: the toggle keeps the URL, the drawn tables switch too.
            page.click("#lang-toggle")
            page.wait_for_function("document.body.dataset.drawnStep === '5'", timeout=30_000)
            assert "lang=zh" in page.url
            assert "每个 GPU 的平均" in page.locator("#bubble-table").inner_text()
            assert "前向" in page.locator("#live-legend").inner_text()
            page.screenshot(path=str(SHOTS / "live_e2e_zh.png"), full_page=True)
            # A shared link to one step, opened by someone else after the run: same step.
            other = browser.new_page()
            other.goto(f"{server.base}/runs/{RUN}?step=2")
            other.wait_for_function("document.body.dataset.drawnStep === '2'", timeout=30_000)
            assert other.locator("#step-slider").input_value() == "2"
            assert not other.locator("#follow").is_checked()
            browser.close()
        stored = all_steps(server.base, RUN)
        status = get_json(server.base, f"/api/runs/{RUN}")
    finally:
        if probe is not None and probe.poll() is None:
            probe.kill()
        server.stop()
    assert sorted((r["rank"], r["step"]) for r in stored) == [
        (rank, step) for rank in range(WORLD) for step in range(STEPS)
    ]
    assert status["attempt"] == 0 and [p["ranks"] for p in status["trend"]] == [WORLD] * STEPS
    local = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:")
    assert all(u.startswith(local) for u in urls), [u for u in urls if not u.startswith(local)]
    # The only error allowed: the 404 of /api/runs/{run} asked before the run existed.
    assert all("404" in e for e in errors), errors
