"""/compare?preset=schedules in real Chromium, wide and phone, English and Chinese: the
forward-only naive column is drawn hatched grey with "not a training step" written on the
metrics chart, and the chart and the columns name a training schedule as the fastest."""

import re

import pytest

from app import i18n
from tests.browser.conftest import SHOTS, api, shot

pytestmark = pytest.mark.browser


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [1440, 390])
def test_naive_is_hatched_and_never_the_winner(page, base_url, width, lang):
    strings = i18n.strings(lang)
    cmp = api(base_url, "/api/compare", "preset=schedules")
    naive = next(m for m in cmp["members"] if m["scenario"]["schedule"] == "naive")
    winner = cmp["members"][cmp["winner"]]
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base_url}/compare?preset=schedules&lang={lang}", wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=compare]")
    page.wait_for_function("document.querySelector('#metrics-chart .annotation-text')")
    chart = page.locator("#metrics-chart")
    assert chart.get_attribute("data-unranked") == str(naive["index"])
    shapes = page.evaluate(
        "() => document.getElementById('metrics-chart')._fullData"
        ".map((t) => t.marker.pattern.shape)"
    )
    for per_bar in shapes:  # one trace per metric, one bar per valid column, in column order
        assert per_bar[naive["index"]] == "/"
        assert per_bar.count("/") == 1
    written = squash(" ".join(chart.locator(".annotation-text").all_text_contents()))
    assert squash(strings["cmp.chart.not_training_short"]) in written
    assert squash(f"{winner['index'] + 1}. {winner['scenario']['schedule']}") in written
    assert "★" in written
    best = page.locator("#columns article.best")
    assert best.count() == 1 and best.get_attribute("data-index") == str(winner["index"])
    col = page.locator(f'#columns article[data-index="{naive["index"]}"]')
    assert (
        col.locator(".badge.not-training").inner_text() == strings["cmp.chart.not_training_short"]
    )
    assert "best" not in (col.get_attribute("class") or "")
    SHOTS.mkdir(exist_ok=True)
    chart.screenshot(path=str(SHOTS / f"compare_naive_chart_{width}_{lang}.png"))
    shot(page, f"compare_naive_{width}_{lang}")
