"""The planner page's HSDP and FP8 choices in Chromium (issue 27), en and zh, at 1440 and
390 px: the recommended row names its dp_shard (shard group x replicas) and FP8 recipe, the
FP8 search says what bf16 would take, nothing scrolls sideways, and the row's overview link
opens the scenario with dp_shard and fp8 in its URL (the share link round-trips)."""

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app import i18n
from tests.browser.conftest import open_view, shot

pytestmark = pytest.mark.browser

# Llama 3 8B on 64 H100s: an HSDP row (shard groups of 8, one node) among the first, and
# fp8=search picks tensorwise on H100.
QUERY = {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": "64", "global_batch": "512",
         "top": "5", "fp8": "search"}  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_the_plan_names_dp_shard_and_fp8_and_its_link_opens(browser, watch, base_url, width, lang):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    page = ctx.new_page()
    page.on("console", watch.console)
    page.set_default_timeout(90_000)  # the first plan also computes the accuracy board
    open_view(page, f"{base_url}/plan?{urlencode({**QUERY, 'lang': lang})}", "plan")
    words = i18n.strings(lang)
    hsdp = page.locator('#plan-table [data-axis="dp_shard"]')
    assert hsdp.count() > 0 and hsdp.first.is_visible()
    assert hsdp.first.inner_text() == "HSDP 8 × 8"
    first = page.locator("#plan-table tbody tr").first
    fp8 = first.locator('[data-axis="fp8"]').inner_text()
    assert fp8 == f"FP8 {words['opt.fp8.tensorwise']}"  # the recipe worded in the page's language
    found = page.locator("#plan-fp8-search")
    assert found.is_visible()
    assert words["plan.fp8.chosen"].split("{")[0] in found.inner_text()
    assert page.locator('#plan-fp8-search a[data-open="bf16"]').is_visible()
    where = words["plan.reason.hsdp_inside"]
    assert where in page.inner_text("#plan-table")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"plan_hsdp_fp8_{lang}_{width}")
    row = hsdp.first.locator("xpath=ancestor::tr")
    row.locator('a[data-open="overview"]').click()
    page.wait_for_selector("body[data-ready]")
    opened = parse_qs(urlparse(page.url).query)
    assert opened["dp_shard"] == ["8"] and opened["zero"] == ["3"]
    assert opened.get("fp8", ["none"])[0] in ("none", "tensorwise")
    ctx.close()
    assert watch.unexpected_errors() == []
