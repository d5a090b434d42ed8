"""/learn's step list at 390 px in zh: a step whose title wraps keeps its number beside its
first line. The links were inline-blocks on the baseline, so "4." stood beside the second
line of 张量并行 TP（+序列并行）：车间里围着半成品分工, under the title's start."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser

# Where each list item's marker sits: on the baseline of the item's first line box, found
# with a zero-height probe put first in the item; and the link's first line of text.
MARKERS = """() => [...document.querySelectorAll(".learn-steps li")].map(li => {
  const a = li.querySelector("a") || li.firstElementChild;
  const probe = document.createElement("span");
  probe.style.cssText = "display:inline-block;width:0;height:0;vertical-align:baseline";
  li.insertBefore(probe, li.firstChild);
  const base = probe.getBoundingClientRect().bottom;
  probe.remove();
  const r = document.createRange(); r.selectNodeContents(a);
  const lines = [...r.getClientRects()];
  const rows = new Set(lines.map(q => Math.round(q.top))).size;
  return {first: [lines[0].top, lines[0].bottom], lines: rows, base};
})"""


def test_a_wrapped_step_title_keeps_its_number_on_its_first_line(browser, watch, base_url):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.on("console", watch.console)
    open_view(page, f"{base_url}/learn?lang=zh", "learn")
    steps = page.evaluate(MARKERS)
    ctx.close()
    assert any(s["lines"] > 1 for s in steps), steps  # at least one title wraps at 390 px
    for s in steps:
        top, bottom = s["first"]
        assert top <= s["base"] <= bottom + 1, s
    assert watch.unexpected_errors() == []
