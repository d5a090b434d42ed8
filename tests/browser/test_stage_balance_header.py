"""The per-stage table's header on the overview and flow pages: its th cells had no padding
(app.css padded only table.comm's td), so at 1440 px "F+B per micro-batch" and "of the slowest
stage" ran together as one phrase and every header sat centred over left-aligned numbers."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser

# The rendered text box of each header cell (a Range, not the cell: the cell's box touches
# its neighbour's whatever the padding), left to right.
TEXT_BOXES = """[...document.querySelectorAll("#card-balance table.stage-balance th")].map((th) => {
  const r = document.createRange(); r.selectNodeContents(th);
  const b = r.getBoundingClientRect(); const c = th.getBoundingClientRect();
  return [b.left, b.right, c.left]; })"""


@pytest.mark.parametrize(("path", "view"), [("/", "overview"), ("/flow", "flow")])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_stage_balance_headers_stand_apart_and_align_with_their_column(
    browser, base_url, path, view, lang
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    try:
        open_view(page, f"{base_url}{path}?lang={lang}", view)
        page.wait_for_selector("#card-balance table.stage-balance th")
        boxes = page.evaluate(TEXT_BOXES)
    finally:
        page.close()
    assert len(boxes) == 4
    for (_, right, _), (left, _, _) in zip(boxes, boxes[1:], strict=False):
        assert left - right >= 12, boxes  # two cells' paddings apart, at least
    for text_left, _, cell_left in boxes:
        assert text_left - cell_left < 12, boxes  # left-aligned, as the cells below
