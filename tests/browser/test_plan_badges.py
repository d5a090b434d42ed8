"""The planner page's honesty badges in Chromium, in Chinese, at a desktop's 1440 px and a
phone's 390 px: a tight row shows its free memory, an extrapolated row says so, the knobs
each row runs are named, and nothing scrolls sideways."""

from urllib.parse import urlencode

import pytest

from app import i18n
from tests.browser.conftest import open_view, shot

pytestmark = pytest.mark.browser

# Llama 3 70B on 64 H100s at a 50% headroom: tight rows and rows with room, side by side.
TIGHT = {"model": "llama3-70b", "hardware": "h100-sxm", "gpus": "64", "global_batch": "128",
         "headroom": "0.5", "lang": "zh"}  # fmt: skip


@pytest.mark.parametrize("width", [1440, 390])
def test_the_badges_read_in_chinese_at_desktop_and_phone_widths(browser, watch, base_url, width):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    page.on("console", watch.console)
    page.set_default_timeout(90_000)  # the first plan also computes the accuracy board
    open_view(page, f"{base_url}/plan?{urlencode(TIGHT)}", "plan")
    zh = i18n.strings("zh")
    tight = page.locator('#plan-table [data-badge="tight"]')
    assert tight.count() > 0 and tight.first.is_visible()
    assert tight.first.inner_text().startswith(zh["plan.tight.free"].split("{")[0])
    assert "GiB" in tight.first.inner_text()
    beyond = page.locator('#plan-table [data-badge="extrapolated"]')
    assert beyond.count() > 0 and beyond.first.inner_text() == zh["plan.badge.extrapolated"]
    knob = page.locator('#plan-table [data-knob="sequence_parallel"]').first
    assert knob.inner_text() == zh["plan.knob.sequence_parallel"]
    assert zh["plan.beyond.lead"].split("{")[0] in page.inner_text("#plan-table")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"plan_badges_zh_{width}")
    ctx.close()
    assert watch.unexpected_errors() == []
