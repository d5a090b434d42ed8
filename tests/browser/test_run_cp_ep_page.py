"""The run page of a run with context (cp) and expert (ep) parallelism (issue 25), in Chromium:
the bubble table gains CP and EP rows, the timeline's legend their kinds, the rank grid a
column per (dp, cp, tp); a 3D run's page names neither. 1440 px in English, 390 px in zh."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.browser.conftest import shot, stored_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
# tests/live's run fixtures
from cp_ep_support import cp_ep_info, cp_ep_records, plain_records, stored_ops  # noqa: E402
from support import TOKEN, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _ops() -> list:
    info = cp_ep_info("cpep", dp=2, tp=1, pp=2, cp=2, ep=2, steps=3)
    plain = run_info("plain", dp=2, tp=2, pp=2, steps=3, m=4)
    return stored_ops({info: cp_ep_records, plain: plain_records})


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    with stored_server(tmp_path_factory, "cpep", TOKEN, _ops()) as url:
        yield url


def _open(page, url: str) -> dict:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("body[data-drawn-step]")
    page.wait_for_selector("#heatmap g.xtick text", state="attached")
    return page.evaluate("""() => ({
      causes: [...document.querySelectorAll('#bubble-table tr')].slice(1)
        .map((r) => r.cells[0].innerText),
      legend: document.querySelector('#live-legend').innerText,
      config: document.querySelector('#run-config').innerText,
      cols: [...document.querySelectorAll('#heatmap g.xtick text')].map((t) => t.textContent),
      overflow: document.documentElement.scrollWidth - window.innerWidth,
    })""")


def test_a_cp_ep_run_shows_cp_and_ep_in_english_at_1440(page, base):
    page.set_viewport_size({"width": 1440, "height": 1000})
    got = _open(page, f"{base}/runs/cpep?lang=en")
    shot(page, "run_cp_ep_en_1440")
    assert got["causes"][3:6] == ["TP collectives", "CP exchanges", "EP all-to-all"]
    assert "CP exchange" in got["legend"] and "EP all-to-all" in got["legend"]
    assert got["cols"] == ["dp0·cp0·tp0", "dp0·cp1·tp0", "dp1·cp0·tp0", "dp1·cp1·tp0"]
    assert got["config"].startswith("dp 2 × tp 1 × pp 2 × cp 2 · ep 2 · 1f1b")
    assert got["overflow"] <= 0


def test_a_cp_ep_run_shows_cp_and_ep_in_chinese_at_390(page, base):
    page.set_viewport_size({"width": 390, "height": 844})
    got = _open(page, f"{base}/runs/cpep?lang=zh")
    shot(page, "run_cp_ep_zh_390")
    assert "CP 通信" in got["causes"] and "EP All-to-All" in got["causes"]
    assert "CP 通信" in got["legend"]
    assert got["overflow"] <= 0


def test_a_3d_runs_page_names_neither(page, base):
    page.set_viewport_size({"width": 1440, "height": 1000})
    got = _open(page, f"{base}/runs/plain?lang=en")
    assert "CP" not in " ".join(got["causes"]) and "CP" not in got["legend"]
    assert len(got["causes"]) == 6 and "EP" not in got["legend"]
    assert got["cols"][:2] == ["dp0·tp0", "dp0·tp1"]
    assert got["config"].startswith("dp 2 × tp 2 × pp 2 · 1f1b")


def test_the_upload_card_sends_cp_and_ep_and_says_a_bad_ep_in_zh(context, watch, base, tmp_path):
    """The /runs card's cp and ep fields travel with the files: an ep that does not fold over
    dp x cp is refused at its field, in the page's language; the right one lays the run out."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
    from cp_ep_traces import write

    watch.allowed_errors.append("status of 422")
    files = sorted(write(tmp_path / "traces").iterdir())
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{base}/runs?lang=zh", wait_until="domcontentloaded")
    for field, value in (("dp", "2"), ("tp", "2"), ("cp", "2"), ("ep", "3")):
        page.fill(f"#upload-{field}", value)
    page.set_input_files("#upload-files", [str(p) for p in files])
    page.fill("#upload-run", "up-cpep")
    page.fill("#upload-token", TOKEN)
    page.click("#upload-send")
    page.wait_for_function("document.getElementById('upload-error').textContent !== ''")
    error = page.locator("#upload-error").inner_text()
    assert "ep: " in error and "ep = 3" in error and "dp*cp" in error
    page.fill("#upload-ep", "4")
    page.click("#upload-send")
    page.wait_for_selector("#upload-link")
    shot(page, "run_cp_ep_upload_zh_390")
    assert "cp=2 ep=4" in page.locator("#upload-summary").inner_text()
    page.wait_for_selector("#runs-table tr[data-run='up-cpep']")
    mesh = page.locator("#runs-table tr[data-run='up-cpep'] td").nth(2).inner_text()
    assert mesh.endswith("dp 2 × tp 2 × pp 1 × cp 2 · ep 4")  # a phone's cell leads with its label
    plain = page.locator("#runs-table tr[data-run='plain'] td").nth(2).inner_text()
    assert plain.endswith("dp 2 × tp 2 × pp 2")
