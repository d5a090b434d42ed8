"""The guided path on a box whose only font is DejaVu: every zh step's CJK text, in the DOM,
in Plotly's SVG and on the grid's canvas, has a glyph in the shipped subset and asks for the
shipped face. Its own module: the fixture starts its own Playwright, which cannot run beside
the module-scoped browser of test_learn_page.py."""

from __future__ import annotations

import pytest

from app.core.teach import learn
from tests.browser.conftest import open_view
from tests.browser.test_cjk_every_page import RECORD_CANVAS, assert_legible, glyphs  # noqa: F401
from tests.browser.test_no_cjk_fonts import bare_fonts_page  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("key", [s.key for s in learn.STEPS])
def test_no_zh_glyph_falls_back_to_a_box(bare_fonts_page, base_url, glyphs, key):  # noqa: F811
    """Each zh step on a box with only DejaVu: every CJK character it renders (DOM, Plotly's
    SVG, the grid's canvas) is in the shipped subset and asks for the shipped face."""
    page = bare_fonts_page
    page.add_init_script(RECORD_CANVAS)
    open_view(page, f"{base_url}{learn.href(key, 'zh')}", "learn")
    canvas = assert_legible(page, glyphs, key)
    if key == "3d":
        assert any("节点" in text for text, _ in canvas), canvas
