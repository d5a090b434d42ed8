"""The guided path in real Chromium: every step draws its widget at 1440 and 390 px in en and
zh with no sideways scroll, ← and → move between steps, the question answers in place from
the keyboard, the mesh names a clicked GPU's coordinates. Screenshots: screenshots/learn-*."""

from __future__ import annotations

import pytest

from app import i18n
from app.core.teach import learn, quiz
from tests.browser.conftest import open_view, shot, url_of

pytestmark = pytest.mark.browser
WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}
# What has the focus, by the name the test uses: its id, step, choice letter or tag.
FOCUSED = """(() => { const a = document.activeElement;
  return a.id || a.dataset.step || a.dataset.choice || a.tagName; })()"""


def _drawn(page, step: learn.Step) -> None:
    """The step's widget is on the page, drawn from the embedded core data."""
    if step.widget in ("memory", "time"):
        assert page.locator("#learn-bars .learn-bar").count() == len(step.variants)
        assert page.locator("#learn-bars .learn-seg").count() >= len(step.variants)
        if step.note == "tp_share":  # the label tells TP's share, from the core's number
            assert "%" in page.locator("#learn-bars .learn-bar-head").last.inner_text()
    elif step.widget == "grid":
        grid = "document.getElementById('learn-grid').meshscopeGrid"
        assert page.evaluate(f"{grid}.layout.world_size") == 8
    else:
        assert int(page.locator("#learn-timeline").get_attribute("data-events")) > 0
        assert "(4−1)/(8+4−1)" in page.locator("#learn-bubble").inner_text()
    assert page.locator("#learn-caption").inner_text().strip()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_every_step_fits_each_width(browser, watch, base_url, width, lang):
    w, h = WIDTHS[width]
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.on("console", watch.console)
    page.on("pageerror", lambda exc: watch.errors.append(f"pageerror: {exc}"))
    title = i18n.strings(lang)["learn.one_gpu.title"]
    try:
        for step in learn.STEPS:
            open_view(page, f"{base_url}{learn.href(step.key, lang)}", "learn")
            _drawn(page, step)
            assert page.evaluate("document.documentElement.scrollWidth") <= w, step.key
            assert page.locator('.learn-steps a[aria-current="step"]').get_attribute(
                "data-step") == step.key  # fmt: skip
            shot(page, f"learn-{step.key}-{width}-{lang}")
        assert page.locator('.learn-steps a[data-step="one_gpu"]').inner_text() == title
    finally:
        ctx.close()
    assert watch.unexpected_errors() == []


def test_arrow_keys_move_between_steps(page, base_url):
    open_view(page, f"{base_url}/learn?step=one_gpu&lang=zh", "learn")
    page.keyboard.press("ArrowLeft")  # no step before the first: stays
    assert "step=one_gpu" in url_of(page)
    with page.expect_navigation():
        page.keyboard.press("ArrowRight")
    page.wait_for_selector("body[data-ready=learn]")
    assert "step=dp&lang=zh" in url_of(page)
    assert page.locator("#learn-step").get_attribute("data-step") == "dp"
    with page.expect_navigation():
        page.keyboard.press("ArrowLeft")
    page.wait_for_selector("body[data-ready=learn]")
    assert "step=one_gpu" in url_of(page)
    page.keyboard.press("Alt+ArrowRight")  # the browser's own shortcut, not ours
    assert "step=one_gpu" in url_of(page)


def test_the_pager_and_the_step_list_work_from_the_keyboard(page, base_url):
    open_view(page, f"{base_url}/learn?step=tp", "learn")
    order = []
    page.locator('.learn-steps a[data-step="tp"]').focus()
    for _ in range(60):  # Tab through the page from the current step's entry
        page.keyboard.press("Tab")
        order.append(page.evaluate(FOCUSED))
        if order[-1] == "learn-next":
            break
    assert order[-1] == "learn-next"
    # Steps list, then the question's choices, then the views, then the pager.
    at = {name: order.index(name) for name in ("pp", "a", "learn-open", "learn-prev")}
    assert at["pp"] < at["a"] < at["learn-open"] < at["learn-prev"] < len(order) - 1
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("body[data-ready=learn]")
    assert "step=pp" in url_of(page) and url_of(page).endswith("#learn-step")


def test_the_question_answers_in_place(page, base_url):
    open_view(page, f"{base_url}/learn?step=dp", "learn")
    q = quiz.BY_ID[learn.BY_KEY["dp"].quiz]
    card = page.locator(f'[data-question="{q.id}"]')
    assert card.locator(".answer").is_hidden()
    right = quiz.LETTERS[q.answer]
    card.locator(f'.choice[data-choice="{right}"]').focus()
    page.keyboard.press(" ")
    assert card.locator(".answer").is_visible()
    assert "right" in card.get_attribute("class")
    assert "step=dp" in url_of(page)  # answered here, not sent to the self-test


def test_the_mesh_names_a_clicked_gpus_coordinates(page, base_url):
    open_view(page, f"{base_url}/learn?step=3d", "learn")
    x, y = page.evaluate("document.getElementById('learn-grid').meshscopeGrid.cellCentre(5)")
    page.locator("#learn-grid").click(position={"x": x, "y": y})
    assert page.locator("#learn-coord").inner_text() == "GPU 5: dp = 1, pp = 0, tp = 1, node 1"
    page.locator('[data-color="dp"]').click()
    assert page.evaluate("document.getElementById('learn-grid').meshscopeGrid.colorBy") == "dp"
    assert page.locator('[data-color="dp"]').get_attribute("aria-pressed") == "true"


def test_the_first_view_link_opens_the_flow_at_the_steps_pipeline(page, base_url):
    open_view(page, f"{base_url}/learn?step=pp", "learn")
    with page.expect_navigation():
        page.locator("#learn-open").click()
    page.wait_for_selector("body[data-ready=flow]")
    assert "pp=4" in url_of(page) and "microbatches=8" in url_of(page)
