"""The run page's "whole run" card in Chromium at 1440 px (en) and 390 px (zh) (issue 25): a
stored run of 16 ranks whose rank 5 is slow in every step names rank 5 over the whole run
(app/api/run_actions.py, the run's actions in DuckDB), and its Parquet link downloads the
current actions. Screenshots: screenshots/run_whole_*.png."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import i18n
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from actions_support import store_steps  # noqa: E402
from support import TOKEN, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]
RUN = "whole-slow"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("whole") / "w.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    with ServerThread(app) as url:
        info = run_info(RUN, dp=4, tp=2, pp=2, steps=6)
        store_steps(app.state.live.store, info, range(6), slow_rank=5)
        yield url


@pytest.mark.parametrize(("lang", "width"), [("en", 1440), ("zh", 390)])
def test_the_whole_run_card_names_the_slow_rank_and_offers_the_parquet(context, base, lang, width):
    words = i18n.strings(lang)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs/{RUN}?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_function("document.getElementById('whole-run-card').dataset.loaded === 'true'")
    card = page.locator("#whole-run-card")
    assert card.locator("h2").inner_text() == words["live.whole_run"]
    assert (card.get_attribute("data-first"), card.get_attribute("data-last")) == ("0", "5")
    first = page.locator("#whole-run-list li").first
    assert (first.get_attribute("data-cause"), first.get_attribute("data-ranks")) == ("rank", "5")
    assert words["live.straggler.phase.compute"] in first.inner_text()
    hint = page.locator("#whole-run-hint").inner_text()
    assert hint.startswith(words["live.whole_run_hint"].split("{")[0])
    assert "16" in hint  # every rank was read
    link = page.locator("#whole-run-parquet")
    assert link.inner_text() == words["live.whole_run_parquet"]
    got = page.request.get(base + link.get_attribute("href"))
    assert got.status == 200 and got.body()[:4] == b"PAR1"  # Parquet's magic bytes
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    card.scroll_into_view_if_needed()
    shot(page, f"run_whole_{lang}_{width}")
    page.close()
