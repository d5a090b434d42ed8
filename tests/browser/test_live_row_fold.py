"""The run page's timeline at 1,024 ranks (issue 25, scale): folded to one row per pipeline
stage plus the slow rank, with the fold said in words. Chromium at 1440 px en and 390 px zh
(screenshots in screenshots/)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from support import TOKEN, records, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]
SLOW = 517


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("fold") / "f.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    info = run_info("fold", dp=128, tp=4, pp=2, steps=2)
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(2):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0))
                for r in records(info, step, t0=1000.0 + step, slow_rank=SLOW)]  # fmt: skip
    with ServerThread(app) as url:
        app.state.live.store.transaction(ops)
        yield url


@pytest.mark.parametrize(("lang", "width"), [("en", 1440), ("zh", 390)])
def test_the_timeline_folds_1024_ranks_and_keeps_the_slow_one(browser, base, lang, width):
    page = browser.new_page(viewport={"width": width, "height": 1000})
    try:
        page.goto(f"{base}/runs/fold?lang={lang}", wait_until="domcontentloaded")
        page.wait_for_function(
            "document.getElementById('live-timeline')?.dataset.rows > 0", timeout=120_000
        )
        rows = int(page.locator("#live-timeline").get_attribute("data-rows"))
        assert 3 <= rows <= 2 + 16  # a row per stage, the outliers
        labels = page.evaluate(
            "() => [...document.querySelectorAll('#live-timeline .ytick text')]"
            ".map(t => t.textContent)"
        )
        assert any(label.startswith("p0 ×512") for label in labels), labels
        assert any(label.startswith(f"r{SLOW} ") and "+" in label for label in labels), labels
        note = page.inner_text("#fold-note")
        assert ("1024 ranks folded" if lang == "en" else "1024 个 rank 折叠") in note
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.locator("#timeline-card").scroll_into_view_if_needed()
        shot(page, f"live-fold-{width}-{lang}")
    finally:
        page.close()
