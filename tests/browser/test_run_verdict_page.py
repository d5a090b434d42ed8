"""/runs/{run} in Chromium for a run whose rank 5 was killed at step 10 (tests/live/
killed_run.py), at 1440 px and 390 px, in en and zh: one status badge (no "live · complete"
beside "failed"), the server's verdict under the config, the first rank outlined in the grid;
measured, replay and the cost model's prediction side by side for a finished run, with the
advice's TP share equal to the table's. Screenshots go to screenshots/run_verdict_*.png."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from app import i18n
from tests.browser.conftest import SHOTS, api, stored_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
import killed_run  # noqa: E402  (tests/live's run fixtures)
from support import TOKEN  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
RUN = killed_run.RUN
SIZES = {"wide": (1440, 1000), "phone": (390, 844)}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    runs = (killed_run.store_ops(), killed_run.healthy_ops(), killed_run.tp_heavy_ops())
    with stored_server(tmp_path_factory, "verdict", TOKEN, *runs) as url:
        yield url


def _open(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    # The feed has said hello and the run's refetch has landed; a step is drawn.
    page.wait_for_function(
        "document.body.dataset.complete === 'true'"
        " && document.body.dataset.drawnStep !== undefined",
        timeout=30_000,
    )


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_killed_run_shows_one_status_and_names_the_cause(browser, context, base, lang, size):
    words = i18n.strings(lang)
    page = context.new_page()
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    _open(page, f"{base}/runs/{RUN}" + ("?lang=zh" if lang == "zh" else ""))
    head = page.locator("#run-head")
    badges = head.locator(".status:visible")
    assert badges.count() == 1 and badges.inner_text() == words["live.status.failed"]
    assert not page.locator("#stream-state").is_visible()  # the feed is no second badge
    assert words["live.status.failed"] in head.inner_text()
    lines = page.locator("#run-verdict p").all_inner_texts()
    query = "lang=zh" if lang == "zh" else "lang=en"
    assert lines == api(base, f"/api/runs/{RUN}", query)["verdict"]["lines"]
    assert len(lines) == 8 and "401" not in " ".join(lines)
    assert page.locator('#rank-states span[data-role="first"]').get_attribute("data-rank") == "5"
    # Legible: the verdict box fits the viewport (no sideways scroll) and is not tiny.
    box = page.locator("#run-verdict").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    size_px = page.eval_on_selector("#run-verdict", "e => parseFloat(getComputedStyle(e).fontSize)")
    assert size_px >= 13
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"run_verdict_{size}_{lang}.png"), full_page=True)


def test_the_runs_list_gives_the_same_verdict(browser, context, base):
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/runs", wait_until="domcontentloaded")
    row = page.locator(f'tr[data-run="{RUN}"]')
    assert row.locator(".status").inner_text() == "failed"
    assert (
        row.locator(".verdict-short").inner_text() == "rank 5 at step 10, after optimizer of step 8"
    )
    # The list redraws itself from /api/runs every 5 s: a new row, the same words.
    row.evaluate("tr => { tr.dataset.drawn = 'server'; }")
    page.wait_for_function(
        f"!document.querySelector('tr[data-run=\"{RUN}\"]').dataset.drawn", timeout=15_000
    )
    assert (
        row.locator(".verdict-short").inner_text() == "rank 5 at step 10, after optimizer of step 8"
    )
    page.screenshot(path=str(SHOTS / "run_verdict_list_phone_en.png"), full_page=True)


def test_measured_replay_and_predicted_side_by_side_on_one_basis(browser, context, base):
    page = context.new_page()
    page.set_viewport_size({"width": 1440, "height": 1000})
    _open(page, f"{base}/runs/tp-heavy")
    cells = {i: page.locator(f"#{i}").inner_text() for i in (
        "measured-pipe", "measured-step", "replay-pipe", "replay-step", "predicted-pipe",
        "predicted-step")}  # fmt: skip
    assert all(v != "—" for v in cells.values()), cells
    assert page.locator("#compare-table").get_attribute("data-hardware") == "h100-sxm"
    assert (
        "Predicted on h100-sxm: the default preset" in page.locator("#apriori-basis").inner_text()
    )
    # The run's scenario in the flow view, with the measured F/B/W (issue 25): the link opens
    # the flow page at the replay's per-stage times, which it draws.
    link = page.locator("#replay-flow")
    assert link.is_visible()
    analysis = api(base, "/api/runs/tp-heavy/analysis", "")
    href = link.get_attribute("href")
    assert href.startswith("/flow?") and "f_time=" in href
    assert dict(parse_qsl(href.split("?", 1)[1])) == analysis["flow_query"]
    flow = context.new_page()
    flow.goto(f"{base}{href}", wait_until="domcontentloaded")
    flow.wait_for_selector("#timeline .main-svg")
    flow.close()
    # The advice's TP share and the table's, on the same basis.
    table = page.locator("#bubble-table").inner_text()
    assert "of the mean rank step" in table
    tp_row = next(line for line in table.splitlines() if line.startswith("TP collectives"))
    share = float(re.search(r"([\d.]+)%", tp_row).group(1))
    advice = page.locator('#advice li[data-rule="tp_comm"]').inner_text()
    said = int(re.search(r"TP communication is (\d+)% of the step", advice).group(1))
    assert said == round(share), (advice, tp_row)
    page.screenshot(path=str(SHOTS / "run_replay_wide_en.png"), full_page=True)
