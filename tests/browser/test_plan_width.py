"""The planner fits a 1440 px window in en and zh: its "open" column (two links and "Copy as")
made the page 10 px wider than the window in en before its links could wrap."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_planner_needs_no_sideways_scroll_at_1440(browser, base_url, lang):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        open_view(page, f"{base_url}/plan?lang={lang}", "plan")
        over = page.evaluate("document.scrollingElement.scrollWidth - innerWidth")
        links = page.locator("table.plan td.links a[data-open]").count()
    finally:
        page.close()
    assert links > 0 and over <= 0, over
