"""A big preset's comparison streamed into the page (issue 28, "fast at real sizes"): the
page comes without it, each column and timeline is drawn as its line comes, and once all are
in, the page shows what the JSON answer says: every column, the verdicts (best, why), the
shared time axis, at 1440 and 390 px, in en and zh."""

import pytest

from tests.browser.conftest import api, shot

pytestmark = pytest.mark.browser

BIG = "preset=schedules&pp=8&microbatches=64&virtual_stages=2"
MARK = "performance.getEntriesByName('{}')[0]?.startTime ?? null"


@pytest.mark.parametrize(("width", "lang"), [(1440, "en"), (390, "zh")])
def test_the_streamed_comparison_ends_as_the_json_answer(page, base_url, width, lang):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{base_url}/compare?{BIG}&lang={lang}", wait_until="domcontentloaded",
              timeout=120_000)  # fmt: skip
    embedded = page.evaluate("JSON.parse(document.getElementById('page-data').textContent)")
    assert embedded["comparison"]["members"] is None  # nothing computed before the page
    page.wait_for_selector("body[data-ready=compare]", timeout=120_000)
    want = api(base_url, "/api/compare", BIG)
    cards = page.eval_on_selector_all(
        "#columns > article",
        "cs => cs.map(c => ({i: Number(c.dataset.index), best: c.classList.contains('best'),"
        " why: c.querySelectorAll('.why li').length}))",
    )
    assert [c["i"] for c in cards] == list(range(len(want["members"])))
    assert [c["i"] for c in cards if c["best"]] == [want["winner"]]
    valid = [m for m in want["members"] if m["valid"]]
    assert all(cards[m["index"]]["why"] == len(m["why"]) > 0 for m in valid)
    ranges = page.eval_on_selector_all("#timelines .timeline", "ds => ds.map(d => d.dataset.range)")
    drawn = [m for m in valid if not m["timeline"]["omitted"]]
    assert len(ranges) == len(drawn) > 0
    assert [float(r) for r in ranges] == pytest.approx(
        [want["time_axis"]["max"] * 1.01] * len(drawn)
    )
    assert page.locator("#cmp-progress").is_hidden()
    first, done = (page.evaluate(MARK.format(f"meshscope:compare-{n}")) for n in ("first", "drawn"))
    assert first is not None and done is not None and first <= done
    shot(page, f"compare-streamed-{width}-{lang}")
