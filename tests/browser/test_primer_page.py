"""The collectives primer in real Chromium: it draws the core's ring, stepping changes the
shown step and the URL, and it fits a phone in both languages (screenshots in /tmp/shots)."""

from pathlib import Path

import pytest

from app import i18n
from tests.browser.conftest import api, open_view, url_of

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots/primer")
QUERY = "dp=4&tp=2&pp=2&zero=1"


def _holds(page) -> list[list[int]]:
    rows = page.locator("#ring-grid .ring-row")
    return [
        [int(c) for c in rows.nth(i).locator(".ring-cell").all_inner_texts()]
        for i in range(rows.count())
    ]


def test_the_page_draws_and_stepping_changes_the_step_and_the_url(page, base_url):
    core = api(base_url, "/api/primer", QUERY)
    open_view(page, f"{base_url}/primer?{QUERY}", "primer")
    steps = core["ring"]["steps"]
    assert page.locator("#ring-grid").get_attribute("data-step") == "0"
    assert _holds(page) == steps[0]["holds"]
    page.click("#ring-next")
    assert page.locator("#ring-grid").get_attribute("data-step") == "1"
    assert "step=1" in url_of(page)
    assert _holds(page) == steps[1]["holds"]
    assert "reduce-scatter" in page.inner_text("#ring-caption")
    page.keyboard.press("ArrowRight")
    assert "step=2" in url_of(page) and _holds(page) == steps[2]["holds"]
    page.locator("#ring-step").fill(str(len(steps) - 1))
    assert f"step={len(steps) - 1}" in url_of(page)
    assert _holds(page) == [[4] * 4] * 4  # every GPU holds the full sum
    page.click("#ring-first")
    assert "step=" not in url_of(page)  # step 0 is the default, left out of the link
    page.wait_for_selector("#memtime-chart .main-svg")
    assert page.locator("#memtime-chart").get_attribute("data-lines") == "2"
    assert page.locator("#memtime-stack svg.memchart").count() == 1
    assert page.locator("#zero-table tr.selected th").inner_text() == "ZeRO-1"
    # A reload at a step shows that step: the link is the state.
    page.goto(f"{base_url}/primer?{QUERY}&step=4", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=primer]")
    assert page.locator("#ring-grid").get_attribute("data-step") == "4"
    assert _holds(page) == steps[4]["holds"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_the_primer_fits_every_width_in_both_languages(browser, base_url, lang, width, height):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = ctx.new_page()
        suffix = "&lang=zh" if lang == "zh" else ""
        open_view(page, f"{base_url}/primer?{QUERY}&step=3{suffix}", "primer")
        page.wait_for_selector("#memtime-chart .main-svg")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if lang == "zh":
            en, zh = i18n.strings("en"), i18n.strings("zh")
            own = [k for k in en if k.startswith("primer.") and en[k] != zh[k]]
            text = page.inner_text("main")
            assert [k for k in own if "{" not in en[k] and en[k] in text] == []
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"primer-{width}-{lang}.png"), full_page=True)
    finally:
        ctx.close()
