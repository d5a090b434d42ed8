"""Pages at a phone's 390 px: nothing scrolls sideways, and the planner's table becomes one
card per configuration whose lines carry their column's name."""

import re

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
@pytest.mark.parametrize(
    "path,view", [("/plan?gpus=64", "plan"), ("/trend", "trend"), ("/primer", "primer")]
)
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


def test_log_axis_tick_labels_on_a_phone_do_not_overprint(phone, base_url):
    # microbatches 1..16: a log axis, whose 16 labels at 390 px would land on each other.
    open_view(phone, f"{base_url}/trend?knob=microbatches&start=1&stop=16", "trend")
    boxes = phone.eval_on_selector_all(
        "#chart-bubble .xtick text",
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })",
    )
    assert len(boxes) >= 4
    boxes.sort()
    assert all(a[1] <= b[0] for a, b in zip(boxes, boxes[1:], strict=False))


RUN = {"run": "llama-dp2-tp2-pp2-with-a-long-name", "status": "running", "dp": 2, "tp": 2,
       "pp": 2, "schedule": "interleaved", "microbatches": 16, "last_step": 41, "steps": 200,
       "world": 8, "updated": 0,
       "verdict": {"status": "live", "label": "live", "summary": "", "step": None,
                   "first": None}}  # fmt: skip


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_runs_list_on_a_phone_is_cards_of_labelled_lines(phone, base_url, lang):
    # The list as the page's refresh draws it, from /api/runs (answered here with one run).
    # (?lang= included: the list asks in the page's language for the verdict's words)
    phone.route(
        re.compile(r".*/api/runs(\?.*)?$"), lambda route: route.fulfill(json={"runs": [RUN]})
    )
    phone.goto(f"{base_url}/runs?lang={lang}")
    assert page_width(phone) <= 390  # the empty list's long command wraps too
    row = phone.locator(f'#runs-table tr[data-run="{RUN["run"]}"]')
    row.wait_for(timeout=15_000)
    assert page_width(phone) <= 390
    assert phone.locator("#runs-table thead").is_hidden()
    header = phone.evaluate(
        "[...document.querySelectorAll('#runs-table thead th')].map(t => t.textContent)"
    )
    label = row.locator("td").nth(4).evaluate("td => getComputedStyle(td, '::before').content")
    assert label == f'"{header[4]}"' and "42/200" in row.locator("td").nth(4).inner_text()
