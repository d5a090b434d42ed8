"""A box with no CJK font at all: Chromium sees only DejaVu (a fontconfig of one folder), so
the zh page's Chinese can come only from the subset the server ships."""

import shutil
from pathlib import Path

import pytest

from tests.browser.conftest import ARGS, CHROMIUM, open_view

pytestmark = pytest.mark.browser
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture
def bare_fonts_page(tmp_path):
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed")
    if not DEJAVU.is_dir():
        pytest.skip("fonts-dejavu-core is not installed")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        f"<dir>{DEJAVU}</dir><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>"
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=ARGS, env={"FONTCONFIG_FILE": str(conf)}
        )
        yield browser.new_page(viewport={"width": 390, "height": 844})
        browser.close()


def loaded_cjk_faces(page) -> list[str]:
    return page.evaluate(
        """async () => { await document.fonts.ready;
        return [...document.fonts].filter(f => f.family.includes("Meshscope CJK"))
          .map(f => f.status); }"""
    )


def test_chinese_comes_from_the_shipped_subset(bare_fonts_page, base_url):
    page = bare_fonts_page
    open_view(page, f"{base_url}/?lang=zh", "overview")
    assert loaded_cjk_faces(page)[0] == "loaded"  # the subset (the 中文-only face is second)
    used = page.evaluate("document.fonts.check('14px \"Meshscope CJK\"', '概览')")
    assert used
    Path("/tmp/shots").mkdir(exist_ok=True)
    page.wait_for_timeout(1500)
    page.screenshot(path="/tmp/shots/zh-no-cjk-fonts-390.png")
