"""Wall-clock times on the run pages follow the page's language, not the browser's: the zh
run page's events read "2:39:31 AM · 已完成" (toLocaleTimeString() with no locale), and so did
the failed run's last event and the runs list's older dates."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.browser.conftest import stored_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
import killed_run  # noqa: E402  (tests/live's run fixtures)
from support import TOKEN  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
AM_PM = re.compile(r"\b[AP]M\b")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    with stored_server(tmp_path_factory, "clock", TOKEN, killed_run.store_ops()) as url:
        yield url


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_run_event_times_are_in_the_pages_language(page, base, lang):
    page.goto(f"{base}/runs/{killed_run.RUN}?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_selector("#run-events li")
    events = page.locator("#run-events li").all_inner_texts()
    verdict = page.locator("#run-head").inner_text()
    # The browser here speaks en-US: only the page's language can make zh times 24-hour.
    assert all(bool(AM_PM.search(e)) == (lang == "en") for e in events), events
    assert lang == "en" or not AM_PM.search(verdict), verdict


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_clock_helper_speaks_the_pages_language(page, base, lang):
    page.goto(f"{base}/runs?lang={lang}", wait_until="domcontentloaded")
    shown = page.evaluate("import('/static/js/fmt.js').then((m) => m.clock(1796524771, true))")
    assert bool(AM_PM.search(shown)) == (lang == "en"), shown
