"""The comparison's timelines on canvas (issue 28, "fast at real sizes"): every block the
core sent is drawn, hover names the block under the pointer, the hover instant and a zoom
are linked across all timelines of a shared axis, and the page's DOM does not grow with the
number of blocks (the Plotly bars were 338K SVG nodes at pp=16 x 256 micro-batches; the
speed itself is measured by bench/bench_compare_draw.py, not here)."""

import pytest

from tests.browser.conftest import api, shot

pytestmark = pytest.mark.browser

SMALL = "preset=schedules&pp=4&microbatches=8"
BIG = "preset=schedules&pp=8&microbatches=64&virtual_stages=2&model=llama3-405b&dp=8&tp=8"


def open_compare(page, base_url, query):
    page.goto(f"{base_url}/compare?{query}", wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector("body[data-ready=compare]", timeout=120_000)


def timelines(page):
    return page.eval_on_selector_all(
        "#timelines .timeline",
        """ds => ds.map(d => ({index: Number(d.dataset.index), events: Number(d.dataset.events),
             range: d.meshscopeTimeline.range, marker: d.meshscopeTimeline.marker}))""",
    )


def test_every_block_the_core_sent_is_drawn(page, base_url):
    open_compare(page, base_url, SMALL)
    sent = {
        m["index"]: len(m["timeline"]["bars"]["stage"])
        for m in api(base_url, "/api/compare", SMALL)["members"]
        if m["valid"] and not m["timeline"]["omitted"]
    }
    drawn = {t["index"]: t["events"] for t in timelines(page)}
    assert drawn == sent and all(n > 0 for n in drawn.values())


def test_hover_names_the_block_and_marks_the_instant_on_every_timeline(page, base_url):
    open_compare(page, base_url, SMALL)
    first = page.locator("#timelines .timeline").nth(2)  # 1f1b: F0 starts stage 0 at t=0
    first.scroll_into_view_if_needed()
    box = first.bounding_box()
    tl = first.evaluate("d => ({x: d.meshscopeTimeline.x(0.001), y: d.meshscopeTimeline.y(0)})")
    page.mouse.move(box["x"] + tl["x"] + 2, box["y"] + tl["y"])
    tip = first.locator(".tl-tip")
    assert tip.is_visible()
    text = tip.inner_text()
    assert "stage 0" in text and "micro-batch 0" in text, text
    marks = {t["marker"] for t in timelines(page)}
    assert len(marks) == 1 and marks.pop() is not None  # one instant, on all of them
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # into the margin: the line goes
    assert all(t["marker"] is None for t in timelines(page))
    shot(page, "compare-canvas-hover")


def test_a_drag_zooms_every_timeline_and_a_double_click_resets(page, base_url):
    open_compare(page, base_url, SMALL)
    full = [t["range"] for t in timelines(page)]
    first = page.locator("#timelines .timeline").first
    first.scroll_into_view_if_needed()
    box = first.bounding_box()
    y = box["y"] + 40
    page.mouse.move(box["x"] + 200, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 500, y, steps=5)
    page.mouse.up()
    zoomed = [t["range"] for t in timelines(page)]
    assert len({tuple(r) for r in zoomed}) == 1  # linked: the same window everywhere
    assert zoomed[0][0] > full[0][0] and zoomed[0][1] < full[0][1]
    first.dblclick(position={"x": 300, "y": 40})
    assert [t["range"] for t in timelines(page)] == full


def test_the_dom_stays_small_at_real_sizes(page, base_url):
    open_compare(page, base_url, BIG)
    counts = timelines(page)
    assert sum(t["events"] for t in counts) > 20_000  # many blocks drawn ...
    # ... into a DOM that does not grow with them (Plotly's bars were several nodes each).
    assert page.evaluate("document.getElementsByTagName('*').length") < 6_000
    assert page.locator("#timelines svg").count() == 0


@pytest.mark.parametrize("width", [1440, 390])
def test_the_memory_and_traffic_legends_are_whole_page_text(browser, base_url, width):
    # Plotly clipped its own legend entries at 390 px ("activation‹", "2×4×⁄"); the legends
    # are page text that wraps, and the memory stacks draw every component the core sends.
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        open_compare(page, base_url, "preset=factory")
        got = page.evaluate(
            """() => ["memory-chart", "comm-chart"].map(id => {
                 const div = document.getElementById(id);
                 const box = div.nextElementSibling;
                 const right = box.getBoundingClientRect().right;
                 return {plotly: div._fullLayout.showlegend,
                         names: [...box.querySelectorAll(".item")].map(i => i.textContent),
                         over: [...box.querySelectorAll(".item")]
                           .filter(i => i.getBoundingClientRect().right > right + 0.5).length,
                         traces: [...new Set(div._fullData.map(t => t.name))]};
               })"""
        )
    finally:
        page.close()
    memory, comm = got
    assert not memory["plotly"] and not comm["plotly"]
    assert memory["names"] == memory["traces"] and "CUDA context + NCCL (floor)" in memory["names"]
    assert len(comm["names"]) == 4 and comm["names"] == comm["traces"]
    assert memory["over"] == comm["over"] == 0
