"""An imported run on /runs/{run} in Chromium at 1440 and 390 px, en and zh (issue 25):
the gloo dp=2 x pp=2 profiler traces whose rank 2 sleeps in each forward
(tests/fixtures/traces/gloo_dp2_pp2_slow_rank2), sent with `meshscope import-trace --server`
to a running server, show their bubble by cause, the rank heatmap, and name rank 2 as the
straggler, in compute, outlined on the grid. Screenshots: screenshots/run_stragglers_*.png."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import i18n
from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, api, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from support import TOKEN  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]
SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2_slow_rank2"
RUN = "imported-slow"
HEAT = """(() => { const d = document.getElementById("heatmap");
  return {z: d.data[0].z, shapes: d.layout.shapes.length}; })()"""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("stragglers") / "s.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    with ServerThread(app) as url:
        ws = url.replace("http://", "ws://") + "/ws/ingest"
        assert main([str(SLOW), "--run", RUN, "--server", ws, "--token", TOKEN]) == 0
        yield url


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_imported_run_names_its_slow_rank_on_the_grid(context, base, lang, width):
    words = i18n.strings(lang)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs/{RUN}?lang={lang}", wait_until="domcontentloaded")
    page.wait_for_function("document.getElementById('heatmap').dataset.stragglers !== undefined")
    # The bubble split by cause: one bar per rank and the table of causes.
    assert page.locator("#bubble-chart").get_attribute("data-ranks") == "4"
    causes = page.locator("#bubble-table").inner_text()
    assert words["live.table.mean_per_rank"] in causes
    # The heatmap: a Plotly heatmap of 2 stages x 2 (dp, tp) columns, rank 2 outlined.
    heat = page.evaluate(HEAT)
    assert len(heat["z"]) == 2 and all(len(row) == 2 for row in heat["z"])
    assert heat["shapes"] == 1
    assert page.locator("#heatmap").get_attribute("data-stragglers") == "2"
    # The panel names rank 2, in compute, against its stage's median, as a slow GPU.
    found = api(base, f"/api/runs/{RUN}/stragglers", "")["stragglers"]
    stage = found[0]["stage"]
    items = page.locator("#straggler-list li")
    assert items.count() == 1
    item = items.first
    assert (item.get_attribute("data-cause"), item.get_attribute("data-ranks")) == ("rank", "2")
    text = item.inner_text()
    assert f"pp{stage}" in text and words["live.straggler.phase.compute"] in text
    assert words["live.straggler.rank"].split("{")[0] in text  # the sentence's own words
    assert f"{found[0]['ratio']:.2f}" in text
    marked = page.locator("#rank-states span[data-straggler='rank']")
    assert marked.get_attribute("data-rank") == "2"
    hint = page.locator("#straggler-hint").inner_text()
    assert hint.startswith(words["live.stragglers_hint"].split("{")[0])
    # Nothing spills sideways on a phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"run_stragglers_{lang}_{width}")
    page.close()
