"""The comparison view in real Chromium: shared axes, editing, share links, presets, zh."""

from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app import i18n
from app.core.schedules import ScheduleName
from tests.browser.conftest import shot, url_of

pytestmark = pytest.mark.browser


def open_compare(page, url):
    res = page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=compare]")
    return res


def columns(page):
    return page.eval_on_selector_all("#columns > article", "cs => cs.map(c => c.dataset.query)")


def x_ranges(page):
    return page.eval_on_selector_all(
        "#timelines .timeline", "ds => ds.map(d => d.meshscopeTimeline.range[1])"
    )


def url_pairs(page):
    return parse_qs(urlparse(url_of(page)).query, keep_blank_values=True)


def wait_for_count(page, n):
    page.wait_for_function(f"document.getElementById('columns').dataset.count === '{n}'")


def test_the_default_page_draws_four_columns_on_one_time_scale(page, base_url):
    assert open_compare(page, f"{base_url}/compare").status == 200
    assert len(columns(page)) == 4
    assert url_pairs(page)["preset"] == ["factory"]  # the bare URL became the preset it shows
    page.wait_for_function("document.querySelectorAll('#timelines .timeline[data-drawn]').length")
    ranges = x_ranges(page)
    assert len(ranges) == 4 and len(set(ranges)) == 1
    assert page.locator("#columns article.best").count() == 1
    assert (
        "OOM" in page.locator("#columns article").first.inner_text()
        or page.locator("#columns article .badge.cross").count() == 1
    )
    assert page.locator("#memory-chart").get_attribute("data-fits") == "false,true,true,true"
    shot(page, "compare")


def test_editing_a_column_changes_the_url_and_the_drawing_and_the_url_reproduces_it(
    context, page, base_url
):
    start = urlencode([("s", "dp=2"), ("s", "dp=4")])
    open_compare(page, f"{base_url}/compare?{start}")
    before = page.locator("#metrics-chart").get_attribute("data-values")
    field = page.locator('#columns article[data-index="1"] input[name="pp"]')
    field.fill("4")
    field.press("Enter")
    page.wait_for_function(
        "document.querySelector('#columns article[data-index=\"1\"]')"
        ".dataset.query.includes('pp=4')"
    )
    assert url_pairs(page)["s"] == ["", "dp=4&pp=4"]
    assert page.locator("#metrics-chart").get_attribute("data-values") != before
    assert page.locator('#diff tr[data-key="pp"]').count() == 1
    drawn = (columns(page), page.locator("#diff").inner_text())
    again = context.new_page()
    open_compare(again, url_of(page))
    assert (columns(again), again.locator("#diff").inner_text()) == drawn


def test_a_bad_edit_shows_the_reason_beside_the_field(page, base_url, watch):
    watch.allowed_errors.append("status of 422")  # the refused fetch, logged by Chromium
    open_compare(page, f"{base_url}/compare?{urlencode([('s', 'dp=2'), ('s', 'dp=4')])}")
    field = page.locator('#columns article[data-index="0"] input[name="tp"]')
    field.fill("0")
    field.press("Enter")
    slot = page.locator('output[data-err-for="s.0.tp"]')
    slot.wait_for(state="visible")
    assert "greater than" in slot.inner_text()
    assert url_pairs(page)["s"][0] == "tp=0"


def test_add_and_remove_scenarios(page, base_url):
    open_compare(page, f"{base_url}/compare?{urlencode([('s', 'dp=2'), ('s', 'dp=4')])}")
    page.click("#add-scenario")
    wait_for_count(page, 3)
    assert url_pairs(page)["s"] == ["", "dp=4", "dp=4"]
    page.click('#columns article[data-index="0"] button.remove')
    wait_for_count(page, 2)
    assert url_pairs(page)["s"] == ["dp=4", "dp=4"]
    assert page.locator("#columns button.remove").count() == 0  # never fewer than 2


def test_preset_buttons_expand_the_first_column(page, base_url):
    open_compare(
        page, f"{base_url}/compare?{urlencode([('s', 'pp=4&microbatches=8'), ('s', 'dp=4')])}"
    )
    page.click('button[data-preset="schedules"]')
    wait_for_count(page, len(ScheduleName))
    pairs = url_pairs(page)
    assert pairs["preset"] == ["schedules"] and pairs["pp"] == ["4"]
    assert "s" not in pairs
    assert page.locator("#timelines .timeline").count() == len(ScheduleName)
    assert page.locator("#cmp-schedules-note").is_visible()
    # Every schedule's column is picked down to a custom comparison of two.
    for i in (2, 3):
        page.check(f'#columns article[data-index="{i}"] input[name="pick"]')
    page.click("#pick-go")
    wait_for_count(page, 2)
    assert len(url_pairs(page)["s"]) == 2
    page.click('button[data-preset="factory"]')
    wait_for_count(page, 4)
    assert url_pairs(page)["preset"] == ["factory"]


def test_the_base_form_edits_the_preset(page, base_url):
    open_compare(page, f"{base_url}/compare?preset=factory&dp=2&tp=2&pp=2")
    field = page.locator('#controls [name="dp"]')
    field.fill("4")
    field.press("Enter")
    page.wait_for_function("location.search.includes('dp=4')")
    wait_for_count(page, 4)
    page.wait_for_function(
        "document.querySelector('#columns article[data-index=\"0\"]').dataset.query"
        " === 'dp=16&tp=1&pp=1&microbatches=1'"
    )  # DP only: all 16 GPUs, the base's 4 x 4 micro-batches spread one per replica
    assert url_pairs(page)["preset"] == ["factory"]


def test_the_chinese_toggle_switches_the_text_and_keeps_the_scenarios(page, base_url):
    start = urlencode([("s", "dp=2"), ("s", "dp=4")])
    open_compare(page, f"{base_url}/compare?{start}")
    page.click("#lang-toggle")
    page.wait_for_url("**lang=zh**")
    page.wait_for_selector("body[data-ready=compare]")
    zh = i18n.strings("zh")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("h2", has_text=zh["cmp.title"]).count() == 1
    assert zh["perf.step_time"] in page.locator("#columns").inner_text()
    assert i18n.strings("en")["cmp.intro"] not in page.content()
    assert url_pairs(page)["s"] == ["", "dp=4"]
    shot(page, "compare-zh")
