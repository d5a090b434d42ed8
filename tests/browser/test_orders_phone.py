"""The overview's rank-order table at a phone's 390 px: an order (tp-pp-dp) and its Use
button each stay on one line (the box scrolls sideways instead). In zh the button's two
characters stood one above the other and every order broke at its hyphens."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser

LINES = """els => els.map(e => {
  const r = document.createRange(); r.selectNodeContents(e);
  return new Set([...r.getClientRects()].map(q => Math.round(q.top))).size;
})"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_orders_and_their_buttons_stay_on_one_line_on_a_phone(browser, watch, base_url, lang):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.on("console", watch.console)
    open_view(page, f"{base_url}/?lang={lang}", "overview")
    page.wait_for_selector("table.orders button")
    assert set(page.eval_on_selector_all("table.orders code", LINES)) == {1}
    assert set(page.eval_on_selector_all("table.orders button", LINES)) == {1}
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    ctx.close()
    assert watch.unexpected_errors() == []
