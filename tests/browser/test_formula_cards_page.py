"""The formula cards in real Chromium: the bubble card writes (p-1)/(m+p-1) out with the URL's
p and m, follows them when they change, says why the simulation differs, in both languages,
and the formulas section carries the same numbers; at desktop and phone widths."""

from pathlib import Path

import pytest

from tests.browser.conftest import api, open_view, url_of

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots/formulas")


def bubble_line(page):
    return page.locator('#card-bubble [data-formula="bubble"]').inner_text()


def test_bubble_card_substitutes_the_urls_p_and_m_and_follows_them(page, base_url):
    open_view(page, f"{base_url}/?dp=1&pp=4&microbatches=4", "overview")
    assert "(4 − 1) / (4 + 4 − 1) = 3 / 7 = 42.9%" in bubble_line(page)
    open_view(page, f"{base_url}/?dp=1&pp=2&microbatches=8", "overview")
    assert "(2 − 1) / (8 + 2 − 1) = 1 / 9 = 11.1%" in bubble_line(page)
    # The form changes the URL and the card follows without a reload.
    page.fill('#controls [name="microbatches"]', "3")
    page.dispatch_event('#controls [name="microbatches"]', "change")
    page.wait_for_function(
        "document.querySelector('#card-bubble [data-formula=bubble]').innerText"
        ".includes('(3 + 2 − 1) = 1 / 4 = 25.0%')"
    )
    assert "microbatches=3" in url_of(page)
    section = page.locator('#f-bubble [data-formula="bubble"]').inner_text()
    assert "1 / 4 = 25.0%" in section


@pytest.mark.parametrize(("lang", "words"), [("en", "p2p sends add"), ("zh", "p2p 发送每跳增加")])
def test_the_gap_is_explained_with_the_p2p_hop(page, base_url, lang, words):
    q = "dp=1&pp=4&microbatches=4&f_time=1&b_time=2&p2p_time=0.1"
    card = api(base_url, "/api/scenario", q)["formulas"]["bubble"]
    open_view(page, f"{base_url}/?{q}&lang={lang}", "overview")
    why = page.locator('[data-formula-why="bubble"]').inner_text()
    simulated = f"{card['simulated']['v'] * 100:.1f}%"
    assert simulated in why and "42.9%" in why and words in why and "0.1" in why
    delta = card["causes"][0]["delta"]["v"] * 100
    assert f"+{delta:.1f}" in why
    if lang == "zh":
        assert "simulated" not in why and "个百分点" in why


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cards_fit_the_screen_with_their_numbers(browser, base_url, width, lang):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    try:
        open_view(page, f"{base_url}/?dp=2&tp=2&pp=4&microbatches=4&lang={lang}", "overview")
        memory = page.locator('#card-memory [data-formula="memory"]').inner_text()
        assert "(2·4)" in memory
        for axis in ("tp", "pp", "dp"):
            assert page.locator(f'#card-comm [data-formula="comm-{axis}"]').count() == 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # Each formula fits its card: the TP split (Y = XW = ... = X1W1 + X2W2) was 375 px
        # in a 343 px card on a phone and scrolled sideways inside it.
        wide = page.evaluate("""[...document.querySelectorAll('.formula math')]
            .filter((m) => m.scrollWidth > m.clientWidth + 1)
            .map((m) => m.closest('.formula').id)""")
        assert wide == []
        SHOTS.mkdir(parents=True, exist_ok=True)
        # The whole page: an element shot scrolls under the sticky header.
        page.screenshot(path=str(SHOTS / f"overview_{width}_{lang}.png"), full_page=True)
    finally:
        ctx.close()
