"""The live page's "Where the step went" legend (issue 28, legible everywhere): page text
under the chart that wraps, not Plotly's horizontal legend, which lay over the chart's
rotated rank labels (badly in zh). Chromium at 1440 and 390 px, en and zh."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app import i18n
from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread, shot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from support import TOKEN, records, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
CAUSES = ("compute_s", "schedule", "pp_peers", "tp", "dp", "host")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("legend") / "l.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    info = run_info("legend", dp=2, pp=2, steps=3)
    ops = [("hello", (info, 0, 0, 1.0))]
    for step in range(3):
        ops += [("record", (ProbeRecord.model_validate(r), 2.0))
                for r in records(info, step, t0=1000.0 + step)]  # fmt: skip
    with ServerThread(app) as url:
        app.state.live.store.transaction(ops)
        yield url


LEGEND = """() => {
  const div = document.getElementById("bubble-chart");
  const box = div.nextElementSibling;
  const chart = div.getBoundingClientRect(), legend = box.getBoundingClientRect();
  const items = [...box.querySelectorAll(".item")];
  return {plotly: div._fullLayout.showlegend, names: items.map(i => i.textContent),
          below: legend.top >= chart.bottom - 0.5,
          over: items.filter(i => i.getBoundingClientRect().right > legend.right + 0.5).length};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_the_causes_legend_is_page_text_below_the_chart(browser, base, lang, width):
    page = browser.new_page(viewport={"width": width, "height": 1000})
    try:
        page.goto(f"{base}/runs/legend?lang={lang}", wait_until="domcontentloaded")
        page.wait_for_function(
            "document.getElementById('bubble-chart')?.dataset.ranks > 0", timeout=60_000
        )
        got = page.evaluate(LEGEND)
        page.locator("#bubble-chart").scroll_into_view_if_needed()
        shot(page, f"live-legend-{lang}-{width}")
    finally:
        page.close()
    table = i18n.strings(lang)
    assert got["names"] == [table[f"live.cause.{k}"] for k in CAUSES]
    assert got["plotly"] is False and got["below"] and got["over"] == 0
