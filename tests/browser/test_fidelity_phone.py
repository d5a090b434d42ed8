"""/fidelity on a phone (issue 28, legible everywhere): at 390 px each table row is a card
of labelled lines, so no number sits in a sideways scroll with no cue; en and zh."""

import pytest

from tests.browser.conftest import open_view, shot

pytestmark = pytest.mark.browser

LAYOUT = """() => {
  const wraps = [...document.querySelectorAll(".table-wrap")];
  const cells = [...document.querySelectorAll("table.fid tbody td")];
  return {
    page: document.scrollingElement.scrollWidth - innerWidth,
    wraps: wraps.map(w => w.scrollWidth - w.clientWidth),
    cells: cells.length,
    unlabelled: cells.filter(td => !(td.dataset.label || "").trim()).length,
    headers: [...document.querySelectorAll("table.fid thead")]
      .filter(h => getComputedStyle(h).display !== "none").length,
    label: getComputedStyle(cells[0], "::before").content,
    sortLinks: [...document.querySelectorAll("#phone-sort a")]
      .filter(a => a.getBoundingClientRect().width > 0).map(a => a.getAttribute("href")),
  };
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_number_is_a_labelled_line_at_390_px(browser, base_url, lang):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        open_view(page, f"{base_url}/fidelity?lang={lang}", "fidelity")
        got = page.evaluate(LAYOUT)
        shot(page, f"fidelity-phone-{lang}-390")
    finally:
        page.close()
    assert got["cells"] > 100 and got["unlabelled"] == 0
    assert got["page"] <= 0 and max(got["wraps"]) <= 0, got
    assert got["headers"] == 0  # the labels are in the cells instead
    assert got["label"] not in ("none", "normal", '""')
    # The headings' sort links, hidden with them, come back as a row of links.
    assert len(got["sortLinks"]) == 5 and all("sort=" in h for h in got["sortLinks"])


def test_the_wide_page_keeps_its_tables(browser, base_url):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        open_view(page, f"{base_url}/fidelity", "fidelity")
        shown = page.evaluate(
            """[...document.querySelectorAll("table.fid thead")]
               .every(h => getComputedStyle(h).display === "table-header-group")
             && getComputedStyle(document.getElementById("phone-sort")).display === "none" """
        )
    finally:
        page.close()
    assert shown
