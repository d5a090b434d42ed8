"""In real Chromium: the accuracy board headlines its held-out figures beside the in-sample
ones, and the overview's band says which rows it stands on, or that the kind is not
validated and what the nearest validated kind is, or that there is no band, in en and zh."""

import re

import pytest

from app import i18n
from tests.browser.conftest import SHOTS, api, open_view

pytestmark = pytest.mark.browser


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_the_board_headlines_held_out_beside_in_sample(page, base_url, lang, width):
    t = i18n.strings(lang)
    page.set_viewport_size({"width": width, "height": 900})
    open_view(page, f"{base_url}/fidelity?lang={lang}", "fidelity")
    summary = api(base_url, "/api/fidelity", "")["summary"]
    for card, key in (("#card-median", "median_abs"), ("#card-max", "max_abs")):
        box = page.locator(card)
        in_sample = t["fid.in_sample_is"].replace("{v}", pct(summary["model"][key]))
        assert box.locator('[data-figure="held-out"]').inner_text() == pct(summary["held_out"][key])
        assert box.locator('[data-figure="in-sample"]').inner_text() == in_sample
        assert box.locator('[data-figure="held-out"]').is_visible()
    assert page.locator("#held-out-note").inner_text() == t["fid.headline"]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    SHOTS.mkdir(exist_ok=True)
    for part in ("summary", "sources", "kinds"):
        page.locator(f"#{part}").screenshot(path=str(SHOTS / f"fid_{part}_{lang}_{width}.png"))
    page.screenshot(path=str(SHOTS / f"fid_held_out_page_{lang}_{width}.png"), full_page=True)


CASES = {
    "default": ("", "nearest"),
    "dp_oom": ("hardware=h100-sxm&dp=64&tp=1&pp=1", "oom"),
    # GPT-3 6.7B: 32 KV heads split over TP 32 (Llama 3 8B's 8 cannot).
    "tp32": ("hardware=h100-sxm&tp=32&dp=1&pp=1&model=gpt3-6.7b", "nearest"),
    "zero3": ("hardware=a100-80g&zero=3&dp=8", "nearest"),
    "naive": ("schedule=naive&pp=4", "forward_only"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_overview_band_says_what_was_validated(page, base_url, lang, case):
    t = i18n.strings(lang)
    query, expect = CASES[case]
    band = api(base_url, "/api/scenario", query)["error_band"]
    open_view(page, f"{base_url}/?{query}&lang={lang}", "overview")
    node = page.locator("#card-perf .band")
    text = node.inner_text()
    if expect == "nearest":
        assert node.get_attribute("data-level") == "nearest"
        near = band["nearest"]
        assert text.startswith(t["band.not_validated"])
        assert f"± {pct(near['median_abs'])}" in text
        label = t[f"band.field.{near['differs'][0]['field']}"]
        assert re.search(re.escape(label), text)
    else:
        assert node.get_attribute("data-level") == "none"
        assert text.startswith(t[f"band.none.{expect}"]) and "±" not in text
    node.screenshot(path=str(SHOTS / f"band_{case}_{lang}.png"))
