"""The flow player from the keyboard, each frame's caption and the legend, in real Chromium."""

import re
from urllib.parse import parse_qs, urlparse

import pytest

from app import i18n
from tests.browser.conftest import api, open_view, url_of

pytestmark = pytest.mark.browser

# The article's demo: DP=2 x TP=2 x PP=2, 4 micro-batches, naive, in teaching units.
ARTICLE = "dp=2&tp=2&pp=2&microbatches=4&schedule=naive&f_time=1"


def query_of(page):
    return {k: v[0] for k, v in parse_qs(urlparse(url_of(page)).query).items()}


def worded(base_url, query, k, lang="en"):
    """Frame k's caption as the page must word it: the core's clauses in the i18n templates."""
    extra = api(base_url, "/api/flow", query)
    table = i18n.strings(lang)
    cap, t = extra["captions"], extra["frames"]["times"][k]

    def fill(key, args):
        return re.sub(r"\{(\d+)\}", lambda m: str(args[int(m[1])]), table[key])

    clauses = [cap["clauses"][i] for i in cap["frames"][k]]
    parts = [fill(f"flowcap.{c[0]}", c[1:]) for c in clauses]
    return fill("flowcap.at", [f"{t:g}"]) + table["flowcap.sep"].join(parts) + table["flowcap.end"]


def frame(page):
    return int(page.inner_text("#step-no"))


def test_arrow_keys_step_one_frame_writing_the_url_and_the_caption(page, base_url):
    open_view(page, f"{base_url}/flow?{ARTICLE}", "flow")
    assert page.inner_text("#flow-caption") == worded(base_url, ARTICLE, 0)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert frame(page) == 2
    assert query_of(page)["t"] == "2"
    caption = page.inner_text("#flow-caption")
    assert caption == worded(base_url, ARTICLE, 2)
    assert "stage 0 (GPUs 0,1,4,5) runs F2" in caption
    # The caption is the chart's accessible text, read out as it changes.
    assert page.get_attribute("#timeline-overlay", "aria-label") == caption
    assert page.get_attribute("#flow-caption", "aria-live") == "polite"
    page.keyboard.press("ArrowLeft")
    assert frame(page) == 1 and query_of(page)["t"] == "1"
    assert page.inner_text("#flow-caption") == worded(base_url, ARTICLE, 1)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # already at the start: stays there
    assert frame(page) == 0 and "t" not in query_of(page)


def test_space_plays_and_pauses_and_the_url_says_so(page, base_url):
    open_view(page, f"{base_url}/flow?{ARTICLE}&speed=0.5", "flow")
    page.keyboard.press("Space")
    page.wait_for_selector("body[data-playing='1']")
    assert query_of(page)["playing"] == "1"
    assert page.inner_text("#play") == i18n.strings("en")["flow.pause"]
    page.wait_for_function("Number(document.getElementById('step-no').textContent) >= 1")
    page.keyboard.press("Space")
    page.wait_for_selector("body[data-playing='0']")
    assert "playing" not in query_of(page)
    assert query_of(page)["t"] == page.get_attribute("body", "data-t")  # paused where it was


def test_a_link_opens_the_same_frame_and_the_same_playing_state(page, context, base_url):
    open_view(page, f"{base_url}/flow?{ARTICLE}&t=3", "flow")
    assert frame(page) == 3
    assert page.inner_text("#flow-caption") == worded(base_url, ARTICLE, 3)
    again = context.new_page()
    open_view(again, f"{base_url}/flow?{ARTICLE}&speed=0.5&playing=1", "flow")
    again.wait_for_selector("body[data-playing='1']")
    assert query_of(again)["playing"] == "1"


def test_keys_typed_into_a_control_stay_with_it(page, base_url):
    open_view(page, f"{base_url}/flow?{ARTICLE}", "flow")
    page.focus("#rank-input")
    page.keyboard.press("ArrowRight")
    page.keyboard.type("3 ")
    assert page.input_value("#rank-input") == "3 "
    page.focus('#controls [name="microbatches"]')
    page.keyboard.press("Space")
    page.keyboard.press("ArrowLeft")
    assert frame(page) == 0
    assert page.get_attribute("body", "data-playing") != "1"
    assert "t" not in query_of(page) and "playing" not in query_of(page)


def test_the_caption_speaks_chinese_on_the_chinese_page(page, base_url):
    open_view(page, f"{base_url}/flow?{ARTICLE}&lang=zh", "flow")
    page.keyboard.press("ArrowRight")
    caption = page.inner_text("#flow-caption")
    assert caption == worded(base_url, ARTICLE, 1, "zh")
    assert "阶段 0（GPU 0,1,4,5）执行 F1" in caption
    assert not re.search(r"[a-z]{3}", caption), "no English words in the zh caption"
    assert page.inner_text("#legend-box summary") == i18n.strings("zh")["legend.title"]


@pytest.mark.parametrize(
    ("query", "shades", "v"),
    [
        ("pp=2&microbatches=4&schedule=1f1b&f_time=1", 0, False),
        ("pp=2&microbatches=4&schedule=interleaved&virtual_stages=2&f_time=1", 2, False),
        ("pp=2&microbatches=4&schedule=zbv&f_time=1", 2, True),
    ],
)
def test_the_legend_shows_the_chunk_shades_the_timeline_drew(page, base_url, query, shades, v):
    open_view(page, f"{base_url}/flow?{query}", "flow")
    assert page.locator("#chunks-one").is_visible() == (shades == 0)
    assert page.locator("#chunks-many").is_visible() == (shades > 0)
    assert page.locator("#chunks-v").is_visible() == v
    swatches = page.locator("#chunk-shades [data-chunk] i")
    assert swatches.count() == shades
    colours = {
        swatches.nth(i).evaluate("i => getComputedStyle(i).backgroundColor") for i in range(shades)
    }
    assert len(colours) == shades, "each chunk has its own shade"
    legend = page.inner_text("#legend-box")
    assert "B0.1" in legend and "W" in legend


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_caption_and_legend_fit_a_phone(browser, base_url, lang):
    ctx = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        phone = ctx.new_page()
        open_view(phone, f"{base_url}/flow?{ARTICLE}&t=2&lang={lang}", "flow")
        assert phone.inner_text("#flow-caption") == worded(base_url, ARTICLE, 2, lang)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        box = phone.locator("#flow-caption").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    finally:
        ctx.close()


def test_a_bad_playing_value_is_a_422_beside_the_play_button(page, base_url, watch):
    watch.allowed_errors.append("status of 422")  # the page itself, logged by Chromium
    res = page.goto(f"{base_url}/flow?{ARTICLE}&playing=maybe", wait_until="domcontentloaded")
    assert res.status == 422
    assert page.inner_text('output[data-err-for="playing"]').strip()
    assert page.locator("#error-banner li").count() == 0, "not an unknown parameter"
