"""The bundled CJK subset covers every CJK character the app can print, and is served."""

from pathlib import Path

import pytest

from tools.subset_cjk_font import OUT, needed

ROOT = Path(__file__).resolve().parents[1]


def test_the_subset_has_a_glyph_for_every_cjk_character_in_the_sources():
    ttlib = pytest.importorskip("fontTools.ttLib")
    pytest.importorskip("brotli")  # woff2
    cmap = ttlib.TTFont(OUT).getBestCmap()
    missing = sorted(ch for ch in needed() if ord(ch) not in cmap)
    assert missing == [], "rerun: python tools/subset_cjk_font.py"


def test_the_app_itself_has_cjk_text_to_cover():
    # A broken scan (wrong folder, wrong pattern) would pass the test above vacuously.
    chars = needed()
    assert {"中", "文", "气", "泡"} <= chars and len(chars) > 300


def test_the_font_and_its_licence_are_served_with_the_pages(client):
    css = client.get(client.app.state.static.url("css/app.css"))
    assert 'url("../fonts/cjk-subset.woff2")' in css.text
    font = client.get(client.app.state.static.url("fonts/cjk-subset.woff2"))
    assert font.status_code == 200 and font.headers["content-type"] == "font/woff2"
    assert font.content == OUT.read_bytes() and "content-encoding" not in font.headers
    licence = client.get(client.app.state.static.url("fonts/OFL.txt"))
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence.text


def test_the_faces_wait_for_their_glyphs_instead_of_drawing_boxes():
    # "swap" drew the 中文 button and zh text in a fallback without CJK glyphs (boxes) until
    # the face arrived; "block" keeps the text unseen for that moment instead.
    css = (ROOT / "static" / "css" / "app.css").read_text()
    faces = css.count('font-family: "Meshscope CJK"')
    assert faces == 2 and css.count("font-display: block") == faces
    assert "font-display: swap" not in css
