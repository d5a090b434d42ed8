"""The overview with MoE parallel folding (etp != tp, Megatron's
--expert-tensor-parallel-size) in real Chromium, at 1440 px in en and 390 px in zh: a clicked
rank lights its expert-TP and expert-DP groups (dashed, inside the dense outlines), the panel
lists them with their node badges, and the legend names them and says whether they leave a
node. With etp = tp none of it appears.

Expected groups are worked by hand from Megatron-LM parallel_state.py's expert RankGenerator
(tp=etp, ep, dp=expert_dp, pp; order tp-cp-ep-dp-pp), as in tests/core/test_etp_folding.py.
"""

import pytest

from app import i18n
from app.core.layout.topology import Layout
from app.core.views.scenario_json import layout_json
from tests.browser.conftest import api, open_view, shot
from tests.browser.test_views import canvas_data, click_rank, ints

pytestmark = pytest.mark.browser

MOE = "model=mixtral-8x7b&order=megatron-5d"
# 16 ranks, 8 a node: expert rank = t + 2e + 8d, so rank 13's expert-TP group is [12, 13]
# (one node) and its expert-DP group [5, 13] (two nodes).
ETP2 = f"{MOE}&tp=4&dp=4&pp=1&ep=4&etp=2&gpus_per_node=8"
# 16 ranks, 4 a node, etp=1: expert rank = e + 4d + 8p, so rank 13's expert-TP group is
# itself, its EP group [12..15] spans two dense TP pairs, its expert-DP group [9, 13].
ETP1 = f"{MOE}&tp=2&dp=4&pp=2&ep=4&etp=1&gpus_per_node=4"
CASES = [
    (1440, "en", ETP2, {"etp": [12, 13], "edp": [5, 13], "ep": [9, 11, 13, 15]}),
    (390, "zh", ETP1, {"etp": [13], "edp": [9, 13], "ep": [12, 13, 14, 15]}),
]
SIZES = {ETP2: dict(tp=4, dp=4, pp=1, ep=4, etp=2, gpus_per_node=8),
         ETP1: dict(tp=2, dp=4, pp=2, ep=4, etp=1, gpus_per_node=4)}  # fmt: skip
RANK = 13
ETP_RGB = (0xB0, 0x7D, 0x00)  # palette.js GROUP.etp
EDP_RGB = (0x0F, 0x8B, 0x8D)  # palette.js GROUP.edp

# Pixels of one colour (within a small tolerance) inside a rank's cell on the grid's canvas.
COUNT_JS = """([rank, rgb]) => {
  const c = document.getElementById('grid'), g = c.meshscopeGrid, dpr = devicePixelRatio || 1;
  const s = g.px(), [cx, cy] = g.cellCentre(rank);
  const x = Math.round((cx - s / 2) * dpr), y = Math.round((cy - s / 2) * dpr);
  const n = Math.max(1, Math.round(s * dpr));
  const px = c.getContext('2d').getImageData(x, y, n, n).data;
  let hits = 0;
  for (let i = 0; i < px.length; i += 4) {
    const d = [0, 1, 2].reduce((sum, k) => sum + Math.abs(px[i + k] - rgb[k]), 0);
    if (d < 30) hits += 1;
  }
  return hits;
}"""


def _pixels(page, rank, rgb) -> int:
    return page.evaluate(COUNT_JS, [rank, list(rgb)])


@pytest.mark.parametrize(("width", "lang", "query", "want"), CASES)
def test_a_clicked_rank_lights_its_expert_tp_and_expert_dp_groups(
    page, base_url, width, lang, query, want
):
    page.set_viewport_size({"width": width, "height": 900})
    open_view(page, f"{base_url}/?{query}&lang={lang}", "overview")
    layout = api(base_url, "/api/scenario", query)["layout"]
    core = Layout(order=("tp", "cp", "ep", "dp", "pp"), **SIZES[query])
    page.locator("#grid").scroll_into_view_if_needed()  # at 390 px it starts below the fold
    click_rank(page, "grid", RANK)
    data = canvas_data(page, "grid")
    assert data["selected"] == str(RANK)
    words = i18n.strings(lang)
    for axis in ("etp", "edp", "ep"):
        assert ints(data[axis]) == want[axis] == core.group(axis, RANK), axis
        (group,) = [g for g in layout["groups"][axis] if RANK in g]
        assert group == want[axis], axis
    # The panel lists both, each with whether it leaves its node, in the page's language.
    for axis in ("etp", "edp"):
        row = page.locator(f'.group-row[data-axis="{axis}"]')
        assert words[f"group.{axis}"] in row.inner_text()
        nodes = {layout["ranks"][r]["node"] for r in want[axis]}
        badge = row.locator(".badge")
        assert ("cross" in badge.get_attribute("class")) == (len(nodes) > 1), axis
        assert words["crosses" if len(nodes) > 1 else "within"] == badge.inner_text()
    # The legend names both and says whether any of their groups crosses a node.
    for axis in ("etp", "edp"):
        item = page.locator(f'#grid-legend .fold[data-axis="{axis}"]')
        where = words["crosses" if layout["crosses_node"][axis] else "within"]
        assert item.inner_text() == f"{words[f'group.{axis}']}: {where}"
    # Drawn: the dashed rings sit on the groups' other members and on no one else's cell.
    others = [r for r in range(16) if r != RANK]
    lit_etp = [r for r in others if _pixels(page, r, ETP_RGB) > 0]
    lit_edp = [r for r in others if _pixels(page, r, EDP_RGB) > 0]
    assert lit_etp == [r for r in want["etp"] if r != RANK]
    assert lit_edp == [r for r in want["edp"] if r != RANK]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, f"overview-etp-{width}-{lang}")
    # Hovering another member: its tooltip names its expert groups too.
    other = want["edp"][0]
    cx, cy = page.evaluate("r => document.getElementById('grid').meshscopeGrid.cellCentre(r)",
                           other)  # fmt: skip
    box = page.locator("#grid").bounding_box()
    page.mouse.move(box["x"] + cx, box["y"] + cy)
    tip = page.locator("#grid-tip")
    tip.wait_for(state="visible")
    edp = ", ".join(str(r) for r in want["edp"])
    text = tip.inner_text()
    assert words["group.etp"] in text and f"{words['group.edp']}: {edp}" in text


def test_with_etp_equal_to_tp_the_page_draws_no_expert_groups(page, base_url):
    query = f"{MOE}&tp=4&dp=4&pp=1&ep=4&gpus_per_node=8"  # etp left out: etp = tp
    open_view(page, f"{base_url}/?{query}", "overview")
    click_rank(page, "grid", RANK)
    data = canvas_data(page, "grid")
    assert data["selected"] == str(RANK) and data["ep"]
    assert "etp" not in data and "edp" not in data
    assert page.locator('.group-row[data-axis="etp"], .group-row[data-axis="edp"]').count() == 0
    assert page.locator("#grid-legend .fold, #grid-legend .fold-break").count() == 0
    assert all(_pixels(page, r, c) == 0 for r in range(16) for c in (ETP_RGB, EDP_RGB))
    # The core agrees: nothing to draw.
    lay = layout_json(Layout(order=("tp", "cp", "ep", "dp", "pp"), tp=4, dp=4, pp=1, ep=4))
    assert "etp" not in lay["groups"] and "edp" not in lay["groups"]
