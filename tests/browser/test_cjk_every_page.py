"""Every zh page on a box whose only font is DejaVu (issue 28, "legible everywhere"): each
CJK character the page renders, as DOM text, form controls or canvas text, has a glyph in
the shipped subset, and every element that shows one asks for the shipped face, so none can
fall back to a box. The character list is the subset's own cmap."""

import pytest

from tests.browser.conftest import open_view
from tests.browser.test_no_cjk_fonts import bare_fonts_page  # noqa: F401  (the fixture)
from tools.subset_cjk_font import OUT, is_cjk

pytestmark = pytest.mark.browser

# The overview small enough at 390 px for the grid to label its nodes ("节点 0") on canvas.
SMALL = "dp=1&tp=2&pp=2&gpus_per_node=4&"
PAGES = ((f"/?{SMALL}", "overview"), ("/flow", "flow"), ("/compare", "compare"),
         ("/trend", "trend"), ("/primer", "primer"), ("/plan", "plan"), ("/fidelity", "fidelity"),
         ("/quiz", "quiz"), ("/runs", None))  # fmt: skip

# Canvas text is not in the DOM: record what fillText draws and with which font.
RECORD_CANVAS = """
  window.__canvasText = [];
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__canvasText.push([String(text), this.font]);
    return fill.call(this, text, ...rest);
  };
"""
# Elements whose own text (not their children's) holds CJK, with their computed font-family;
# <option>s are read through their <select>, which draws the chosen one.
OWN_TEXT = r"""() => {
  const cjk = new RegExp("[\u2e80-\u2fdf\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff" +
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]");
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("script, style, noscript, template")) continue;
    let own = "";
    for (const n of el.childNodes) if (n.nodeType === 3) own += n.nodeValue;
    if (el.tagName === "SELECT") own = [...el.options].map(o => o.text).join(" ");
    if (el.tagName === "OPTION") continue;
    if (["INPUT", "TEXTAREA"].includes(el.tagName)) own = el.value + (el.placeholder || "");
    const family = getComputedStyle(el).fontFamily;
    if (cjk.test(own)) out.push([el.tagName, own.trim().slice(0, 40), family]);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def glyphs():
    ttlib = pytest.importorskip("fontTools.ttLib")
    pytest.importorskip("brotli")
    return set(ttlib.TTFont(OUT).getBestCmap())


@pytest.mark.parametrize(("path", "ready"), PAGES)
def test_no_zh_glyph_can_fall_back_to_a_box(bare_fonts_page, base_url, glyphs, path, ready):  # noqa: F811
    page = bare_fonts_page
    page.add_init_script(RECORD_CANVAS)
    if ready:
        open_view(page, f"{base_url}{path}{'&' if '?' in path else '?'}lang=zh", ready)
    else:
        page.goto(f"{base_url}{path}?lang=zh", wait_until="domcontentloaded")
    page.wait_for_timeout(300)
    canvas = assert_legible(page, glyphs, path)
    if ready == "overview":  # the canvas check must have had something to check
        assert any("节点" in text for text, _ in canvas), canvas


def assert_legible(page, glyphs: set[int], where: str) -> list[list[str]]:
    """Every CJK character the open page renders (DOM, selects, canvas text recorded by
    RECORD_CANVAS) has a glyph in the subset and asks for the shipped face; returns the
    canvas texts with their fonts, for a page's own checks."""
    shown = page.evaluate(OWN_TEXT)
    canvas = page.evaluate("window.__canvasText")
    assert shown, f"{where}: the zh page printed no Chinese at all"
    texts = [text for _, text, _ in shown] + [text for text, _ in canvas]
    texts.append(page.evaluate("document.body.innerText"))
    missing = sorted({ch for t in texts for ch in t if is_cjk(ch) and ord(ch) not in glyphs})
    assert missing == [], f"{where}: no glyph in the subset for {missing}"
    plain = [(tag, text) for tag, text, family in shown if "Meshscope CJK" not in family]
    assert plain == [], f"{where}: elements whose font stack lacks the shipped face"
    bare = [(text, font) for text, font in canvas
            if any(is_cjk(ch) for ch in text) and "Meshscope CJK" not in font]  # fmt: skip
    assert bare == [], f"{where}: canvas text drawn without the shipped face"
    return canvas


def test_the_compact_zh_units_have_glyphs(glyphs):
    # Intl's zh-CN compact notation ("80.3亿" parameters) prints characters no source holds.
    assert {ord("万"), ord("亿")} <= glyphs
