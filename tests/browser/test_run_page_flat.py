"""A run whose ranks all measure the same, and whose replay matches it, reads plainly on its
page in Chromium: the residuals' axis says 0, not Plotly's "120f" for 1e-13 ms of float
noise; the heatmap's colour bar starts at the one value's side of zero, not ±0.4 around it
(negative seconds); an import's event keeps its report's lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.main import create_app
from app.settings import Settings
from tests.browser.conftest import ServerThread

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from actions_support import store_steps  # noqa: E402
from support import TOKEN, run_info  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
RUN = "flat"
REPORT = "meshscope import-trace: run flat\n  spans: F 4\n  residual 0.000 ms"
TICKS = """(id) => [...document.querySelectorAll(`#${id} .ytick text`)].map((t) => t.textContent)"""
SCALE = """() => { const t = document.getElementById("heatmap")._fullData[0];
  return {zmin: t.zmin, zmax: t.zmax, values: t.z.flat().filter((v) => v !== null)}; }"""


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    db = tmp_path_factory.mktemp("flat") / "f.sqlite3"
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    with ServerThread(app) as url:
        store_steps(app.state.live.store, run_info(RUN, dp=2, tp=1, pp=2, steps=3), range(3))
        app.state.live.store.transaction([("event", (RUN, None, "imported", REPORT, 1.0))])
        yield url


@pytest.mark.parametrize("width", [1440, 390])
def test_a_flat_run_reads_plainly(context, base, width):
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base}/runs/{RUN}", wait_until="domcontentloaded")
    page.wait_for_function("document.querySelector('#heatmap .main-svg') !== null")
    page.wait_for_function("document.querySelector('#residual-chart .ytick') !== null")
    ticks = page.evaluate(TICKS, "residual-chart")
    assert ticks and all(t.strip("−-0.") == "" or t[-1].isdigit() for t in ticks), ticks
    scale = page.evaluate(SCALE)
    low, high = min(scale["values"]), max(scale["values"])
    assert scale["zmin"] <= low <= high <= scale["zmax"] and scale["zmin"] >= 0, scale
    event = page.locator("#run-events li", has_text="imported").inner_text()
    assert "\n" in event and event.split("\n")[-1].strip() == "residual 0.000 ms", event


LEGEND = """() => [...document.querySelectorAll('#live-legend span')].map((s) => s.textContent)"""


def test_the_timeline_legend_lists_only_the_kinds_the_step_has(context, base):
    # A dp x pp run under 1F1B: no TP all-reduce, no weight gradient (W), both were listed.
    from app import i18n

    words = i18n.strings("en")
    page = context.new_page()
    page.goto(f"{base}/runs/{RUN}", wait_until="domcontentloaded")
    page.wait_for_function("document.getElementById('drawn-step').textContent !== '—'")
    names = page.evaluate(LEGEND)
    assert words["live.kind.F"] in names and words["live.kind.dp"] in names
    assert words["live.kind.tp"] not in names and words["live.kind.W"] not in names
