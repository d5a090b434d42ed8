"""The run page's peak-memory table on a 390 px phone in zh: its last column, peak RSS, holds
only dashes for a run that sent none (an import, a GPU run), so its header 峰值 RSS（主机进程，
自启动起） shrank to 38 px, wrapped a glyph or two a line and made the header row 155 px tall,
a blank band above the table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.browser.conftest import stored_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
import killed_run  # noqa: E402  (tests/live's run fixtures)
from support import TOKEN  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    with stored_server(tmp_path_factory, "memhead", TOKEN, killed_run.store_ops()) as url:
        yield url


def test_the_memory_header_stays_a_few_lines_on_a_zh_phone(page, base):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{base}/runs/{killed_run.RUN}?lang=zh", wait_until="domcontentloaded")
    page.wait_for_selector("#memory-table tr:nth-child(2)")
    cells = page.evaluate("""[...document.querySelector('#memory-table tr').cells].map((c) => {
      const b = c.getBoundingClientRect(); return [c.innerText, b.width, b.height]; })""")
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('#memory-table th')).lineHeight) || 18"
    )
    assert max(h for _, _, h in cells) <= 4 * line, cells
