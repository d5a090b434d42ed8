"""/api/learn and /learn: every step answers in en and zh with widget data computed by the
core, a bad step or language is a 422 naming the field (in the page's language), each step's
views open, the nav offers the path, and the page stays under the asset budget."""

from __future__ import annotations

import re
from html import unescape

import pytest
from page_html import page_data

from app import i18n
from app.core.evaluate.learn import default_run, widget
from app.core.teach import learn, quiz

KEYS = [s.key for s in learn.STEPS]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", KEYS)
def test_each_step_answers_in_each_language(client, key, lang):
    page = client.get(learn.href(key, lang))
    assert page.status_code == 200
    data = page_data(page.text)
    assert data["errors"] == {} and data["state"] == {"lang": lang, "step": key}
    strings = i18n.strings(lang, quiz=True)
    assert unescape(strings[f"learn.{key}.title"]) in unescape(page.text)
    assert unescape(strings[f"learn.{key}.analogy"]) in unescape(page.text)
    step = learn.BY_KEY[key]
    assert data["learn"]["question"]["text"] == strings[f"quiz.{quiz.BY_ID[step.quiz].key}.q"]
    api = client.get(f"/api/learn?step={key}&lang={lang}")
    assert api.status_code == 200
    assert api.json() == data["learn"]


@pytest.mark.parametrize("key", KEYS)
def test_each_widget_is_the_cores_own(client, key):
    """The page's widget is the core's evaluate() of the step's scenarios, number for number."""
    body = client.get(f"/api/learn?step={key}").json()
    assert body["widget"] == widget(learn.BY_KEY[key], default_run())
    assert body["widget"]["kind"] == learn.BY_KEY[key].widget


@pytest.mark.parametrize(
    ("query", "field"),
    [("step=xx", "step"), ("step=", "step"), ("lang=fr", "lang"), ("bogus=1", "bogus")],
)
def test_bad_state_is_a_422_naming_the_field(client, query, field):
    res = client.get(f"/api/learn?{query}")
    assert res.status_code == 422
    assert [d["loc"][1] for d in res.json()["detail"]] == [field]
    page = client.get(f"/learn?{query}")
    assert page.status_code == 422
    data = page_data(page.text)
    assert list(data["errors"]) == [field]
    assert data["state"]["step"] == "one_gpu"  # the path starts over under the banner
    assert f"<code>{field}</code>" in page.text


def test_a_bad_step_is_told_in_the_pages_language(client):
    page = client.get("/learn?step=moe&lang=zh")
    assert page.status_code == 422
    reason = page_data(page.text)["errors"]["step"]
    assert CJK.search(reason) and "one_gpu" in reason
    assert '<html lang="zh-CN">' in page.text


VIEWS = sorted({(s.key, v.href(lang)) for s in learn.STEPS for v in s.views
                for lang in ("en", "zh")})  # fmt: skip


@pytest.mark.parametrize(("key", "href"), VIEWS, ids=[f"{k}:{h[:40]}" for k, h in VIEWS])
def test_every_view_link_opens(client, key, href):
    res = client.get(href)
    assert res.status_code == 200, f"{key}: {href}"
    data = page_data(res.text)
    assert data["errors"] == {}
    if data.get("comparison"):
        assert all(m["valid"] for m in data["comparison"]["members"])


def test_each_step_opens_a_full_view_at_its_configuration(client):
    for step in learn.STEPS:
        first = step.views[0]
        assert first.path in {"/", "/flow", "/compare", "/plan"}
        href = first.href()
        variant = step.variants[0].query if step.widget in ("timeline", "grid") else ""
        assert all(p in href for p in variant.split("&")), (step.key, href)
    page = client.get("/learn?step=pp")
    assert 'href="/flow?dp=1&amp;tp=1&amp;pp=4&amp;microbatches=8' in page.text


def test_the_page_links_its_neighbours_and_every_step(client):
    page = client.get("/learn?step=dp&lang=zh")
    assert 'href="/learn?step=one_gpu&amp;lang=zh#learn-step" rel="prev"' in page.text
    assert 'href="/learn?step=zero&amp;lang=zh#learn-step" rel="next"' in page.text
    assert 'data-step="dp" aria-current="step"' in page.text
    assert page.text.count('<li><a href="/learn?step=') == len(learn.STEPS)
    last = client.get("/learn?step=tuning").text
    assert 'rel="next"' not in last and 'rel="prev"' in last


@pytest.mark.parametrize("path", ["/", "/quiz?lang=zh", "/flow"])
def test_the_nav_offers_the_path_beside_the_tools(client, path):
    page = client.get(path)
    lang = "?lang=zh" if "zh" in path else ""
    assert f'data-nav="learn" href="/learn{lang}"' in page.text


@pytest.mark.parametrize("key", KEYS)
def test_the_page_stays_under_the_asset_budget(client, key):
    from asset_budget import page_files

    page = client.get(learn.href(key, "zh"))
    files = page_files(page.text)
    names = {f.name for f in files}
    assert {"learn.js", "learn_bars.js", "learn_views.js", "grid.js", "timeline.js",
            "learn.css"} <= names  # fmt: skip
    assert all(f.exists() for f in files)
    assert sum(f.stat().st_size for f in files) < 100_000
    assert "cdn" not in page.text.lower()
