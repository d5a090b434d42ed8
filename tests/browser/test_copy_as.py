""" "Copy as" in Chromium, at a desktop's 1440 px and a phone's 390 px, in English and Chinese:
on the overview, the flow view, a compare column and a planner row, a press copies exactly
what GET /api/export serves (read back from the clipboard) and names the framework release;
a configuration the framework cannot run says why in the page's language and copies nothing;
nothing scrolls sideways."""

from urllib.parse import urlencode

import pytest

from app import i18n
from tests.browser.conftest import SHOTS, api, open_view, shot

pytestmark = pytest.mark.browser

SCENARIO = {"dp": "2", "tp": "2", "pp": "4", "microbatches": "8", "schedule": "interleaved",
            "virtual_stages": "2"}  # fmt: skip
ZBV = {"dp": "2", "tp": "2", "pp": "2", "microbatches": "4", "schedule": "zbv"}
PLAN = {"model": "llama3-8b", "hardware": "h100-sxm", "gpus": "16", "global_batch": "32"}


def _press(page, menu, fmt: str, state: str) -> str:
    """Open the menu, press a format, wait for the status to say ``state``; its text."""
    if menu.get_attribute("open") is None:
        menu.locator("summary").click()
    menu.locator(f'button[data-format="{fmt}"]').click()
    status = menu.locator(".copy-as-status")
    page.wait_for_function(
        "(el) => el.dataset.state && el.dataset.state !== 'busy'", arg=status.element_handle()
    )
    assert status.get_attribute("data-state") == state, status.inner_text()
    return status.inner_text()


def _clipboard(page) -> str:
    return page.evaluate("navigator.clipboard.readText()")


def _copied(page, base_url, menu, fmt: str, query: dict, strings: dict) -> None:
    text = _press(page, menu, fmt, "copied")
    served = api(base_url, "/api/export", urlencode({"format": fmt, **query}))
    assert served["ok"] and _clipboard(page) == served["text"]
    assert served["version"] in text and strings[f"export.{fmt}"] in text
    assert menu.locator(".copy-as-text").inner_text().strip() == served["text"].strip()


def _menu_shot(menu, name: str) -> None:
    """The opened menu alone: the full-page shots are too tall to read it at 390 px."""
    SHOTS.mkdir(exist_ok=True)
    menu.scroll_into_view_if_needed()
    menu.screenshot(path=str(SHOTS / f"{name}_menu.png"))


def _no_sideways_scroll(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_copy_as_on_every_scenario_view(browser, watch, base_url, width, lang):
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    page = ctx.new_page()
    page.on("console", watch.console)
    page.set_default_timeout(120_000)  # the first plan also computes the accuracy board
    strings = i18n.strings(lang)
    q = {**SCENARIO, "lang": lang}

    # The flow view: the CSV is the schedule torch would run, then the TOML.
    open_view(page, f"{base_url}/flow?{urlencode(q)}", "flow")
    menu = page.locator("#copy-as .copy-as")
    assert menu.locator("summary").inner_text() == strings["export.copy_as"]
    _copied(page, base_url, menu, "torch-csv", SCENARIO, strings)
    _copied(page, base_url, menu, "torchtitan", SCENARIO, strings)
    _no_sideways_scroll(page, width)
    shot(page, f"copy_as_flow_{lang}_{width}")
    _menu_shot(menu, f"copy_as_flow_{lang}_{width}")

    # The overview of a ZB-V scenario: Megatron cannot run it and says so; torch can.
    open_view(page, f"{base_url}/?{urlencode({**ZBV, 'lang': lang})}", "overview")
    menu = page.locator("#copy-as .copy-as")
    page.evaluate("navigator.clipboard.writeText('untouched')")
    said = _press(page, menu, "megatron", "cannot")
    assert _clipboard(page) == "untouched"  # nothing copied
    assert strings["export.cannot"].split("{")[0] in said or said.startswith("Megatron-LM")
    assert "zbv" in said and menu.locator(".copy-as-text").is_hidden()
    if lang == "zh":
        assert "无法运行" in said and "不支持 zbv" in said
    _copied(page, base_url, menu, "torch-csv", ZBV, strings)
    _no_sideways_scroll(page, width)
    shot(page, f"copy_as_overview_{lang}_{width}")
    _menu_shot(menu, f"copy_as_overview_{lang}_{width}")

    # A compare column: its own scenario (here GPipe), not the page's URL.
    open_view(page, f"{base_url}/compare?{urlencode({'preset': 'schedules', **q})}", "compare")
    column = page.locator(".cmp-col").nth(1)
    column_query = dict(p.split("=", 1) for p in column.get_attribute("data-query").split("&"))
    assert column_query["schedule"] == "gpipe"
    _copied(page, base_url, column.locator(".copy-as"), "torch-csv", column_query, strings)
    assert "gpipe" in _press(page, column.locator(".copy-as"), "megatron", "cannot")
    _no_sideways_scroll(page, width)
    shot(page, f"copy_as_compare_{lang}_{width}")
    _menu_shot(column, f"copy_as_compare_{lang}_{width}")

    # A planner row: the row's scenario.
    open_view(page, f"{base_url}/plan?{urlencode({**PLAN, 'lang': lang})}", "plan")
    row = page.locator("#plan-table tbody tr").first
    slot = row.locator(".copy-as-slot")
    row_query = dict(p.split("=", 1) for p in slot.get_attribute("data-query").split("&"))
    row_query.pop("lang", None)
    for fmt in ("megatron", "torchtitan"):  # the row's own answer, copied or refused
        served = api(base_url, "/api/export", urlencode({"format": fmt, **row_query}))
        if served["ok"]:
            _copied(page, base_url, slot.locator(".copy-as"), fmt, row_query, strings)
        else:
            said = _press(page, slot.locator(".copy-as"), fmt, "cannot")
            assert served["version"] in said
    _no_sideways_scroll(page, width)
    shot(page, f"copy_as_plan_{lang}_{width}")
    _menu_shot(slot.locator(".copy-as-body"), f"copy_as_plan_{lang}_{width}")
    ctx.close()
    assert watch.unexpected_errors() == []
