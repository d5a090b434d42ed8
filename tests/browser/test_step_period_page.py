"""ZB-H2's step on the pages, in real Chromium: the overview's bubble card and the flow page
show the steady state of back-to-back steps (Qi et al. 2024 §4 post-validation) and say so,
with one step alone beside it, in both languages; ZB-H1's card shows no such line."""

from pathlib import Path

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots/step_period")
Q = "pp=4&dp=1&tp=1&microbatches=8&f_time=1&b_time=1&w_time=1"
SAYS = {
    "en": ("Steady state", "post-validation", "every 24 units", "27 units", "11.1%"),
    "zh": ("连续多步的常态", "后验证", "每 24 单位", "27 单位", "11.1%"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_bubble_card_shows_zb_h2s_steady_state_and_says_so(page, base_url, lang):
    open_view(page, f"{base_url}/?schedule=zb-h2&{Q}&lang={lang}", "overview")
    card = page.locator("#card-bubble")
    assert card.locator(".big").inner_text() == "0.0%"
    text = card.inner_text()
    assert all(words in text for words in SAYS[lang]), text
    SHOTS.mkdir(parents=True, exist_ok=True)
    card.screenshot(path=str(SHOTS / f"bubble-card-{lang}.png"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_flow_page_says_its_animation_is_one_step_of_a_steady_state(page, base_url, lang):
    open_view(page, f"{base_url}/flow?schedule=zb-h2&{Q}&lang={lang}", "flow")
    text = page.locator("#flow-step-period").inner_text()
    assert all(words in text for words in SAYS[lang]), text


def test_zb_h1_shows_its_single_step_without_a_steady_state_line(page, base_url):
    open_view(page, f"{base_url}/?schedule=zb-h1&{Q}", "overview")
    card = page.locator("#card-bubble")
    assert card.locator(".big").inner_text() == "11.1%"
    assert card.locator("[data-step-period]").count() == 0
