"""Pages at a phone's 390 px: nothing scrolls sideways, and the planner's table becomes one
card per configuration whose lines carry their column's name."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser


@pytest.fixture
def phone(browser, watch):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.on("console", watch.console)
    yield page
    ctx.close()
    assert watch.unexpected_errors() == []


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path,view", [("/plan?gpus=64", "plan"), ("/trend", "trend")])
def test_nothing_scrolls_sideways_on_a_phone(phone, base_url, path, view, lang):
    open_view(
        phone,
        f"{base_url}{path}&lang={lang}" if "?" in path else f"{base_url}{path}?lang={lang}",
        view,
    )
    assert page_width(phone) <= 390


def test_a_planner_row_on_a_phone_reads_as_labelled_lines(phone, base_url):
    open_view(phone, f"{base_url}/plan?gpus=64", "plan")
    assert phone.locator("#plan-table thead").is_hidden()
    cell = phone.locator("#plan-table tbody tr").first.locator("td").nth(6)
    label = cell.evaluate("td => getComputedStyle(td, '::before').content")
    assert label == '"tokens/s"'
    row = phone.locator("#plan-table tbody tr").first.bounding_box()
    assert row["width"] <= 390
