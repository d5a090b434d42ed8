"""The self-test and the article's demo in real Chromium: answering writes the URL, a reload
keeps the progress, and both pages fit a phone in both languages (screenshots in /tmp/shots)."""

from pathlib import Path

import pytest

from app import i18n
from app.core.teach import quiz
from tests.browser.conftest import open_view, url_of

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/shots")
WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}


def test_answering_writes_the_url_and_a_reload_keeps_it(page, base_url):
    open_view(page, f"{base_url}/quiz", "quiz")
    q = quiz.BY_ID[3]  # "1F1B has a smaller bubble than GPipe": false
    card = page.locator(f'[data-question="{q.id}"]')
    assert card.locator(".answer").is_hidden()
    card.locator(f'.choice[data-choice="{quiz.LETTERS[q.answer]}"]').click()
    assert card.locator(".answer").is_visible()
    assert f"answers={q.id}{quiz.LETTERS[q.answer]}" in url_of(page)
    assert page.locator("#quiz-progress").inner_text().startswith(f"1 of {len(quiz.QUESTIONS)}")
    wrong = quiz.BY_ID[6]
    page.locator(f'[data-question="{wrong.id}"] .choice[data-choice="a"]').click()
    assert f"answers={q.id}{quiz.LETTERS[q.answer]},{wrong.id}a" in url_of(page)
    page.reload(wait_until="domcontentloaded")
    page.wait_for_selector("body[data-ready=quiz]")
    assert card.locator(".answer").is_visible()
    assert "right" in card.get_attribute("class")
    assert "wrong" in page.locator(f'[data-question="{wrong.id}"]').get_attribute("class")
    assert page.locator("#quiz-progress").inner_text() == (
        f"2 of {len(quiz.QUESTIONS)} answered, 1 right"
    )
    # The proof opens the comparison it names.
    with page.expect_navigation():
        card.locator("a[data-proof]").first.click()
    page.wait_for_selector("body[data-ready=compare]")
    assert "schedule%3Dgpipe" in url_of(page)


def test_a_shared_set_opens_in_chinese_with_its_questions_only(page, base_url):
    open_view(page, f"{base_url}/quiz?lang=zh&only=1,2,3", "quiz")
    assert page.locator("[data-question]").count() == 3
    zh = i18n.strings("zh", quiz=True)
    assert page.locator("section.teach h2").inner_text() == zh["quiz.title"]
    page.locator('[data-question="2"] .choice[data-choice="b"]').click()
    assert "lang=zh&only=1,2,3&answers=2b" in url_of(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize(
    ("name", "path", "view"),
    [("quiz", "/quiz?answers=1b,3a,9a", "quiz"), ("article", "/?preset=article", "overview")],
)
def test_the_pages_fit_each_width(browser, watch, base_url, name, path, view, width, lang):
    w, h = WIDTHS[width]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.on("console", watch.console)
    try:
        open_view(page, f"{base_url}{path}&lang={lang}", view)
        assert page.evaluate("document.documentElement.scrollWidth") <= w
        if name == "article":
            assert "schedule=naive" in url_of(page) and "f_time=1" in url_of(page)
            assert page.locator('#article-ranks tr[data-rank="5"]').is_visible()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{width}-{lang}.png"), full_page=True)
    finally:
        ctx.close()
    assert watch.unexpected_errors() == []
