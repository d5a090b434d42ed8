"""The primer's CP and EP card in real Chromium: the sequence bar and tables draw the core's
chunks and experts, the links toggle cp and open a mixture of experts, and the card fits a
phone in Chinese (screenshots in /tmp/shots/primer)."""

from pathlib import Path

import pytest

from tests.browser.conftest import api, open_view, url_of

pytestmark = pytest.mark.browser
OWNERS = "els => els.map(e => e.dataset.owner)"
SHOTS = Path("/tmp/shots/primer")
CP4 = "dp=1&tp=2&pp=1&cp=4&rank=2"
MOE = "model=mixtral-8x7b&dp=4&tp=2&pp=1&cp=2&ep=4&order=megatron-5d"


def test_the_cp_bar_and_table_are_the_cores_chunks(page, base_url):
    cp = api(base_url, "/api/primer", CP4)["cp_ep"]["cp"]
    open_view(page, f"{base_url}/primer?{CP4}", "primer")
    owners = page.locator("#cp-bar .cp-chunk").evaluate_all(OWNERS)
    expected = [""] * (2 * cp["size"])
    for pos, (a, b) in enumerate(cp["chunks"]):
        expected[a] = expected[b] = str(cp["ranks"][pos])
    assert owners == expected and len(owners) == 8
    # The selected rank's two chunks are marked, one early and one late.
    mine = page.locator("#cp-bar .cp-chunk.mine").evaluate_all(OWNERS)
    assert mine == ["2", "2"]
    rows = page.locator("#cp-table tbody tr")
    assert rows.count() == 4 and page.locator("#cp-table tr.selected th").inner_text() == "GPU 2"
    assert "cp − 1 = 3 steps" in page.inner_text("#cp-ring")
    assert page.locator("#ep-try-line").is_visible()  # the default model is dense
    page.click("#cp-try")
    page.wait_for_selector("body[data-ready=primer]")
    assert "cp=" not in url_of(page) and page.locator("#cp-table").is_hidden()
    assert page.inner_text("#cp-memory") == ""  # nothing to compare at cp = 1


def test_at_cp_1_the_phone_shows_no_chunk_table(browser, base_url):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        open_view(page, f"{base_url}/primer?lang=zh", "primer")
        # The phone layout turns tables into blocks of cards; hidden must still hide it.
        assert page.locator("#cp-table").is_hidden()
    finally:
        ctx.close()


def test_the_dense_models_link_opens_the_experts(page, base_url):
    open_view(page, f"{base_url}/primer", "primer")
    page.click("#ep-try")
    page.wait_for_selector("body[data-ready=primer]")
    assert "model=mixtral-8x7b" in url_of(page) and "ep=4" in url_of(page)
    assert page.locator("#ep-table tbody tr").count() == 4


@pytest.mark.parametrize("lang,width,height", [("en", 1440, 900), ("zh", 390, 844)])
def test_the_expert_card_fits_and_speaks_the_language(browser, base_url, lang, width, height):
    ep = api(base_url, "/api/primer", MOE)["cp_ep"]["ep"]
    ctx = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = ctx.new_page()
        open_view(page, f"{base_url}/primer?{MOE}&lang={lang}", "primer")
        cells = page.locator("#ep-table tbody td").all_inner_texts()
        join = " to " if lang == "en" else " 至 "
        assert cells == [f"{lo}{join}{hi}" for lo, hi in ep["expert_ids"]]
        facts = page.inner_text("#ep-facts")
        assert ("routed experts" if lang == "en" else "个路由专家") in facts
        assert page.locator("#ep-try-line").is_hidden()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#cpep-card").screenshot(path=str(SHOTS / f"cpep-{width}-{lang}.png"))
    finally:
        ctx.close()


def test_a_collective_exchange_is_told_apart_from_the_ring(page, base_url):
    q = "dp=1&tp=2&pp=1&cp=4&cp_comm=allgather"
    cp = api(base_url, "/api/primer", q)["cp_ep"]["cp"]
    assert cp["comm"] == "allgather" and cp["exposed_s"]["forward"] > 0
    open_view(page, f"{base_url}/primer?{q}", "primer")
    text = page.inner_text("#cp-ring")
    assert "cp_comm=allgather" in text and "ring takes" not in text
