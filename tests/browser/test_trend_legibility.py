"""The trend's marks stay apart (issue 28, legible everywhere): invalid points sit in a strip
along the top, in a colour no series uses (they sat on the x axis, over its ticks, in
the grey of the 10th series, dualpipe's), and a log x axis of many values keeps its labels
apart."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser

# Every schedule as a line (dualpipe's is the 10th colour), some points invalid.
QUERY = "pp=4&f_time=1&knob=microbatches&start=1&stop=12&series=schedule"
# 20 swept values over a log axis, more than the 16 that used to fall back to Plotly's ticks.
LOG = "knob=microbatches&values=" + ",".join(str(v) for v in range(4, 84, 4))

MARKS = """(id) => {
  const gd = document.getElementById(id);
  const bad = gd._fullData.at(-1);
  const lines = gd._fullData.slice(0, -1).map(t => t.line.color);
  return {axis: bad.yaxis, ys: [...new Set(bad.y)], colour: bad.marker.color, lines,
          top: gd._fullLayout.yaxis2.range};
}"""
TICKS = """(id) => [...document.querySelectorAll(`#${id} .xtick text`)]
  .map(t => t.getBoundingClientRect()).map(r => [r.left, r.right])"""


@pytest.mark.parametrize("width", [1440, 390])
def test_invalid_points_are_a_strip_along_the_top_in_their_own_colour(browser, base_url, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        open_view(page, f"{base_url}/trend?{QUERY}", "trend")
        marks = page.evaluate(MARKS, "chart-bubble")
    finally:
        page.close()
    assert marks["axis"] == "y2" and marks["ys"] == [0.94] and marks["top"] == [0, 1]
    assert len(marks["lines"]) >= 10 and marks["colour"] not in marks["lines"]


@pytest.mark.parametrize("width", [1440, 390])
def test_log_axis_labels_never_overlap(browser, base_url, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        open_view(page, f"{base_url}/trend?{LOG}", "trend")
        spans = page.evaluate(TICKS, "chart-time")
        kind = page.evaluate("document.getElementById('chart-time')._fullLayout.xaxis.type")
    finally:
        page.close()
    assert kind == "log" and len(spans) >= 3
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


OOM_LABEL = """() => {
  const gd = document.getElementById("chart-memory");
  const label = gd.querySelector(".annotation").getBoundingClientRect();
  const plot = gd.querySelector(".nsewdrag").getBoundingClientRect();
  return {label_bottom: label.bottom, plot_top: plot.top};
}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_the_out_of_memory_label_sits_above_the_plot_not_on_its_marks(browser, base_url, width):
    # Inside the plot it sat on the strip of invalid marks (and on high markers), in zh at 390.
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        open_view(page, f"{base_url}/trend?lang=zh", "trend")
        box = page.evaluate(OOM_LABEL)
    finally:
        page.close()
    assert box["label_bottom"] <= box["plot_top"] + 1, box
