"""The guided path on a box whose only font is DejaVu: every zh step's CJK text, in the DOM,
in Plotly's SVG and on the grid's canvas, has a glyph in the shipped subset and asks for the
shipped face. Its own module: the fixture starts its own Playwright, which cannot run beside
the module-scoped browser of test_learn_page.py."""

from __future__ import annotations

import pytest

from app.core.teach import learn
from tests.browser.conftest import open_view
from tests.browser.test_cjk_every_page import OWN_TEXT, RECORD_CANVAS, glyphs  # noqa: F401
from tests.browser.test_no_cjk_fonts import bare_fonts_page  # noqa: F401  (the fixture)
from tools.subset_cjk_font import is_cjk

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("key", [s.key for s in learn.STEPS])
def test_no_zh_glyph_falls_back_to_a_box(bare_fonts_page, base_url, glyphs, key):  # noqa: F811
    """Each zh step on a box with only DejaVu: every CJK character it renders (DOM, Plotly's
    SVG, the grid's canvas) is in the shipped subset and asks for the shipped face."""
    page = bare_fonts_page
    page.add_init_script(RECORD_CANVAS)
    open_view(page, f"{base_url}{learn.href(key, 'zh')}", "learn")
    shown = page.evaluate(OWN_TEXT)
    canvas = page.evaluate("window.__canvasText")
    if key == "3d":
        assert any("节点" in text for text, _ in canvas), canvas
    texts = [text for _, text, _ in shown] + [text for text, _ in canvas]
    texts.append(page.evaluate("document.body.innerText"))
    missing = sorted({ch for t in texts for ch in t if is_cjk(ch) and ord(ch) not in glyphs})
    assert missing == [], f"{key}: no glyph in the subset for {missing}"
    plain = [(tag, text) for tag, text, family in shown if "Meshscope CJK" not in family]
    assert plain == [], f"{key}: elements whose font stack lacks the shipped face"
    bare = [(text, font) for text, font in canvas
            if any(is_cjk(ch) for ch in text) and "Meshscope CJK" not in font]  # fmt: skip
    assert bare == [], f"{key}: canvas text drawn without the shipped face"
