"""/fidelity?lang=zh at 390 px: the tables' precision, recompute and schedule cells say in
Chinese what a source left unsaid. They showed the records' own "unknown" and "mixed 16-bit
(unspecified)" on the Chinese page; en keeps those words."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser

CELLS = """labels => [...document.querySelectorAll("table.fid tbody td")]
  .filter(td => labels.includes(td.dataset.label)).map(td => td.textContent.trim())"""


@pytest.mark.parametrize(
    "lang,labels,unknown,mixed",
    [("zh", ["精度", "重计算", "调度（v）"], "未说明", "混合 16 位（未说明哪种）"),
     ("en", ["precision", "recompute", "schedule (v)"], "unknown", "mixed 16-bit (unspecified)")],
)  # fmt: skip
def test_unsaid_values_are_worded_in_the_pages_language(browser, base_url, lang, labels,
                                                        unknown, mixed):  # fmt: skip
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        open_view(page, f"{base_url}/fidelity?lang={lang}", "fidelity")
        cells = page.evaluate(CELLS, labels)
    finally:
        page.close()
    assert len(cells) > 100
    assert unknown in cells and mixed in cells
    if lang == "zh":
        assert not [c for c in cells if "unknown" in c or "16-bit" in c]
