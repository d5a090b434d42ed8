"""The choices the pages' scripts build read in the page's language too: compare's editor
words its "naive" schedule (opt.schedule.naive) with the value, the link's own, unchanged,
and the overview's order table words the article's preset (opt.order.article)."""

import pytest

from app import i18n

pytestmark = pytest.mark.browser
NAIVE_VS_1F1B = "s=dp%3D2%26pp%3D2%26schedule%3Dnaive&s=dp%3D2%26pp%3D2%26schedule%3D1f1b"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_compare_editor_words_a_schedule_and_keeps_its_value(page, base_url, lang):
    words = i18n.strings(lang)
    page.goto(f"{base_url}/compare?lang={lang}&{NAIVE_VS_1F1B}", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=compare]")
    select = page.locator("form.cmp-editor select[name=schedule]").first
    assert select.input_value() == "naive"  # the value a link carries, in every language
    shown = select.locator("option:checked").inner_text()
    assert shown == words["opt.schedule.naive"] and (lang == "en") == (shown == "naive")
    # The card's line under its title words it the same way (it said "naive" on a zh page).
    line = page.locator("article.cmp-col > p.muted").first.inner_text()
    assert f" · {words['opt.schedule.naive']} · m = " in line, line


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_order_table_words_the_articles_preset(page, base_url, lang):
    words = i18n.strings(lang)
    page.goto(f"{base_url}/?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=overview]")
    row = page.locator("table.orders tr[data-order=tp-pp-dp] td").nth(1)
    assert row.inner_text() == f"{words['opt.order.article']}, picotron"
