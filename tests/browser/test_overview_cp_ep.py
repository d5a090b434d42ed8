"""The overview with context (cp) and expert (ep) parallelism in real Chromium, at 1440 and
390 px, in en and zh: a clicked rank lights its CP ring and EP group (the core's groups),
each with its node-crossing badge, and the grid can colour by cp and ep."""

import pytest

from app import i18n
from tests.browser.conftest import api, open_view, shot
from tests.browser.test_views import canvas_data, click_rank, ints

pytestmark = pytest.mark.browser

# 16 ranks on 4 nodes of 4: the CP ring of rank 13 stays in its node, its EP group crosses.
QUERY = "model=mixtral-8x7b&dp=2&tp=2&pp=2&cp=2&ep=4&order=megatron-5d&gpus_per_node=4"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_a_clicked_rank_lights_its_cp_ring_and_ep_group(page, base_url, width, lang):
    page.set_viewport_size({"width": width, "height": 900})
    open_view(page, f"{base_url}/?{QUERY}&lang={lang}", "overview")
    layout = api(base_url, "/api/scenario", QUERY)["layout"]
    rank = 13
    page.locator("#grid").scroll_into_view_if_needed()  # at 390 px it starts below the fold
    click_rank(page, "grid", rank)
    data = canvas_data(page, "grid")
    assert data["selected"] == str(rank)
    words = i18n.strings(lang)
    for axis in ("cp", "ep", "tp", "pp", "dp"):
        (group,) = [g for g in layout["groups"][axis] if rank in g]
        assert ints(data[axis]) == group, axis
        row = page.locator(f'.group-row[data-axis="{axis}"]')
        nodes = {layout["ranks"][r]["node"] for r in group}
        assert ("cross" in row.locator(".badge").get_attribute("class")) == (len(nodes) > 1)
    assert ints(data["cp"]) == [13, 15] and ints(data["ep"]) == [9, 11, 13, 15]
    cp_row = page.locator('.group-row[data-axis="cp"]')
    assert words["group.cp"] in cp_row.inner_text()
    assert "within" in cp_row.locator(".badge").get_attribute("class")
    assert "cross" in page.locator('.group-row[data-axis="ep"] .badge').get_attribute("class")
    assert words["coord.cp"] in page.locator("#selection").inner_text()
    # The page fits its window: no sideways scroll at either width.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, f"overview-cp-ep-{width}-{lang}")


def test_the_grid_colours_by_cp_and_the_3d_page_offers_no_cp(page, base_url):
    open_view(page, f"{base_url}/?{QUERY}", "overview")
    page.select_option("#color-by", "cp")
    page.wait_for_function("new URLSearchParams(location.search).get('color') === 'cp'")
    legend = page.locator("#grid-legend").inner_text()
    assert "cp 0" in legend and "cp 1" in legend and "cp 2" not in legend
    open_view(page, f"{base_url}/?dp=2&tp=2&pp=2", "overview")
    options = page.eval_on_selector_all("#color-by option", "os => os.map(o => o.value)")
    assert options == ["dp", "pp", "tp", "node"]
    assert "cp" not in canvas_data(page, "grid")
