"""FP8 on the overview, in real Chromium: with an FP8 recipe the performance card says its MFU
is against the bf16 peak (issue 27), in en and zh; without one it says nothing of the kind."""

import pytest

from tests.browser.conftest import open_view

pytestmark = pytest.mark.browser
Q = "model=llama3-70b&tp=8&pp=4&dp=8&microbatches=32"
SAYS = {"en": ("FP8 (blockwise)", "bf16 peak"), "zh": ("FP8（blockwise）", "bf16 峰值")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_perf_card_says_fp8_mfu_is_against_the_bf16_peak(page, base_url, lang):
    open_view(page, f"{base_url}/?{Q}&fp8=blockwise&lang={lang}", "overview")
    note = page.locator("#card-perf [data-mfu-basis='bf16']")
    assert note.count() == 1
    text = note.inner_text()
    assert all(words in text for words in SAYS[lang]), text


def test_a_16_bit_scenario_has_no_fp8_note(page, base_url):
    open_view(page, f"{base_url}/?{Q}", "overview")
    assert "MFU" in page.locator("#card-perf").inner_text()
    assert page.locator("#card-perf [data-mfu-basis]").count() == 0
