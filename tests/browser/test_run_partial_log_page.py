"""A log that holds some ranks of its run (DeepSpeed prints its timers on rank 0 alone): once
the run is over, its steps are whole with the ranks that reported, so the page draws them
with the others left blank instead of waiting for ranks no file holds. A run that may still
report keeps waiting for its whole world (the server's whole_at)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import i18n
from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, api, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
LOG = Path(__file__).resolve().parents[1] / "fixtures" / "deepspeed" / "deepspeed_zero2_dp4.log"
TOKEN = "browser-partial-token-0123456789"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("partial") / "p.sqlite3"
    assert main([str(LOG), "--run", "ds", "--db", str(db)]) == 0  # rank 0 of dp = 4
    with ServerThread(create_app(Settings(db=db, ingest_token=TOKEN))) as url:
        yield url


def test_an_ended_run_is_whole_with_the_ranks_that_reported(base):
    run = api(base, "/api/runs/ds", "")
    assert (run["world"], run["whole_at"], run["status"]) == (4, 1, "done")


@pytest.mark.parametrize(("lang", "width"), [("en", 1440), ("zh", 390)])
def test_the_page_draws_rank_0s_steps_and_leaves_the_others_blank(context, base, lang, width):
    words = i18n.strings(lang)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs/ds?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_function("document.body.dataset.drawnStep === '2'")
    assert page.locator("#steps-complete").inner_text() == "3"
    assert page.locator("#ranks-present").inner_text() == "1/4"
    data = json.loads(page.evaluate("document.getElementById('page-data').textContent"))
    assert data["whole_at"] == 1
    assert (
        page.locator("#steps-complete")
        .evaluate("e => e.parentElement.textContent")
        .startswith(words["live.steps_complete"])
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"run_partial_log_{lang}_{width}")
