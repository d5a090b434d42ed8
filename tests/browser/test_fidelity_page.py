"""The accuracy board and the error band in real Chromium: the board in both languages, a
row's link opening the scenario it predicts, and the band beside each predicted step time."""

from pathlib import Path

import pytest

from app import i18n
from tests.browser.conftest import api, open_view, url_of

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots")


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_board_renders_in_each_language(page, base_url, lang):
    assert open_view(page, f"{base_url}/fidelity?lang={lang}", "fidelity").status == 200
    t = i18n.strings(lang)
    assert page.locator("section.teach h2").inner_text() == t["fid.title"]
    assert page.locator("#sources h2").inner_text() == t["fid.sources.title"]
    board = api(base_url, "/api/fidelity", "")
    assert page.locator("#rows-table tbody tr").count() == board["predicted"]
    assert page.locator("#left-table tbody tr").count() == board["runs"] - board["predicted"]
    assert page.locator('nav a[data-nav="fidelity"]').get_attribute("aria-current") == "page"


def test_a_rows_link_opens_the_scenario_whose_step_time_it_shows(page, base_url):
    open_view(page, f"{base_url}/fidelity?sort=gpus", "fidelity")
    row = page.locator("#rows-table tbody tr").first
    predicted = float(row.get_attribute("data-predicted"))
    with page.expect_navigation():
        row.locator('a[data-open="scenario"]').click()
    page.wait_for_selector("body[data-ready=overview]")
    model = page.evaluate("JSON.parse(document.getElementById('page-data').textContent).model")
    assert model["step_time_s"] == predicted
    assert page.locator("#card-perf .band b.pm").is_visible()


def fill(text: str, **vars) -> str:
    for k, v in vars.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def sources(t, n: int) -> str:
    return fill(t["band.sources.one" if n == 1 else "band.sources.many"], k=n)


# A100 1F1B TP·PP·DP without SP (on by default at tp > 1): Narayanan's rows
VALIDATED = "hardware=a100-80g&dp=4&tp=2&pp=2&sequence_parallel=false"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_overview_flow_and_compare_show_the_band(page, base_url, lang):
    t = i18n.strings(lang)
    band = api(base_url, "/api/scenario", VALIDATED)["error_band"]
    assert band["validated"] and band["held_out"] and band["same_hardware"]
    pm = f"± {pct(band['median_abs'])}"
    open_view(page, f"{base_url}/?{VALIDATED}&lang={lang}", "overview")
    text = page.locator("#card-perf .band").inner_text()
    assert text.startswith(pm) and t["band.link"] in text
    words = fill(t["band.held_out"], n=band["rows"], sources=sources(t, len(band["sources"])),
                 max=pct(band["max_abs"]))  # fmt: skip
    assert f"({words})" in text
    open_view(page, f"{base_url}/flow?{VALIDATED}&lang={lang}", "flow")
    assert page.locator("#flow-step .band b.pm").inner_text() == pm
    open_view(page, f"{base_url}/compare?lang={lang}", "compare")
    assert page.locator(".cmp-col .band").count() == page.locator(".cmp-col").count()
    with page.expect_navigation():
        page.locator("#card-perf .band a, .cmp-col .band a").first.click()
    page.wait_for_selector("body[data-ready=fidelity]")
    assert page.evaluate("document.documentElement.lang") == ("zh-CN" if lang == "zh" else "en")


def test_hardware_without_validated_rows_says_so(page, base_url):
    open_view(page, f"{base_url}/?hardware=b200&lang=zh", "overview")
    assert (
        page.locator("#card-perf .band.none")
        .inner_text()
        .startswith(i18n.strings("zh")["band.none.hardware"])
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_screenshots_and_no_sideways_scroll(page, base_url, lang, width):
    page.set_viewport_size({"width": width, "height": 900})
    SHOTS.mkdir(exist_ok=True)
    open_view(page, f"{base_url}/fidelity?lang={lang}", "fidelity")
    assert no_sideways_scroll(page)
    page.screenshot(path=str(SHOTS / f"fid_board_{lang}_{width}.png"), full_page=True)
    open_view(page, f"{base_url}/?lang={lang}", "overview")
    assert no_sideways_scroll(page)
    page.locator("#card-perf").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"fid_overview_{lang}_{width}.png"))
    page.locator("#card-perf").screenshot(path=str(SHOTS / f"fid_overview_card_{lang}_{width}.png"))


def test_the_header_copies_the_link_and_switches_language(page, base_url):
    open_view(page, f"{base_url}/fidelity?sort=gpus", "fidelity")
    page.click("#copy-link")
    page.wait_for_function("document.getElementById('copy-status').textContent.length > 0")
    assert page.locator("#copy-status").inner_text() == i18n.strings("en")["copy.done"]
    assert page.evaluate("navigator.clipboard.readText()") == url_of(page)
    with page.expect_navigation():
        page.click("#lang-toggle")
    page.wait_for_selector("body[data-ready=fidelity]")
    assert "lang=zh" in url_of(page) and "sort=gpus" in url_of(page)
