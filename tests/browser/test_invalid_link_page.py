"""A page link with a bad parameter opens a 422 page, not the API's JSON: it names the
parameter in the link's language, its language switch words the same problems in the other
language, and its link opens the page without them (app/api/page_invalid.py)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import SHOTS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_a_repeated_parameter_is_named_switched_and_dropped(page, base_url, watch):
    watch.allowed_errors.append("422")  # the page's own status, which Chromium logs
    page.goto(f"{base_url}/flow?dp=2&dp=4&tp=2", wait_until="domcontentloaded")
    assert page.inner_text("#invalid li") == "dp: given 2 times; give it once"
    assert page.locator("[aria-current]").count() == 0  # not under the run list
    page.click("#lang-toggle")
    page.wait_for_selector("html[lang=zh-CN]")
    assert page.inner_text("#invalid li") == "dp: 出现了 2 次，只能给一次"
    page.set_viewport_size({"width": 390, "height": 800})
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "invalid_link_zh_390.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click("#invalid-retry")
    page.wait_for_selector("body[data-page=flow]")
    assert page.evaluate("location.search") == "?tp=2&lang=zh"
