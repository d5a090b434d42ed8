"""The pages: server-rendered with the view model embedded, 422 beside the control, offline."""

import re
from pathlib import Path

import pytest
from page_html import error_beside, page_data

from app import i18n
from app.api import assets
from app.core.evaluate import evaluate
from app.core.inputs.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", ["/", "/flow"])
def test_each_page_embeds_the_same_view_model_the_api_returns(client, path):
    query = "dp=2&tp=2&pp=4&microbatches=8&f_time=1"
    page = client.get(f"{path}?{query}")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    data = page_data(page.text)
    assert data["model"] == client.get(f"/api/scenario?{query}").json()
    assert data["errors"] == {}


def test_the_flow_page_embeds_what_api_flow_returns(client):
    query = "pp=4&microbatches=8&schedule=interleaved&virtual_stages=2&f_time=1"
    data = page_data(client.get(f"/flow?{query}").text)
    assert data["extra"] == client.get(f"/api/flow?{query}").json()
    assert {"sends", "inflight", "frames"} <= set(data["extra"])


def test_the_overview_embeds_the_order_comparison(client):
    data = page_data(client.get("/?dp=4&tp=2&pp=2&gpus_per_node=4").text)
    assert data["extra"] == client.get("/api/orders?dp=4&tp=2&pp=2&gpus_per_node=4").json()


def test_view_state_is_kept_out_of_the_scenario_and_echoed(client):
    data = page_data(client.get("/flow?rank=3&t=2.5&lang=zh&speed=4&color=tp&playing=1").text)
    assert data["state"] == {
        "lang": "zh", "rank": 3, "t": 2.5, "color": "tp", "speed": 4.0, "playing": True
    }  # fmt: skip
    assert data["model"]["scenario"] == Scenario().model_dump(mode="json")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("dp=0", "dp"),
        ("dp=abc", "dp"),
        ("f_time=nan", "f_time"),
        ("hbm_gib=inf", "hbm_gib"),
        ("schedule=interleaved&pp=3", "virtual_stages"),
        ("schedule=interleaved&pp=4&virtual_stages=2&microbatches=9", "microbatches"),
        ("dp=300&tp=300", "dp"),
        ("order=tp-tp-dp", "order"),
        ("schedule=nope", "schedule"),
        ("rank=8", "rank"),
        ("rank=-1", "rank"),
        ("color=red", "color"),
    ],
)
@pytest.mark.parametrize("path", ["/", "/flow"])
def test_a_bad_parameter_renders_the_page_with_the_reason_beside_its_control(
    client, path, query, field
):
    page = client.get(f"{path}?{query}")
    if field == "color" and path == "/flow":
        field = None  # flow has no colour control: the reason goes to the banner
    assert page.status_code == 422
    assert 'id="controls"' in page.text, "the page, not a bare error"
    data = page_data(page.text)
    assert data["model"] is None
    if field:
        assert error_beside(page.text, field), f"no message beside {field}"
        assert field in data["errors"]
    else:
        assert re.search(r"<li><code>color</code>", page.text)


def test_unknown_and_other_views_parameters_are_listed_in_the_banner(client):
    page = client.get("/flow?bogus=1&t=-1")
    assert page.status_code == 422
    assert "<li><code>bogus</code>" in page.text
    assert error_beside(page.text, "t")


def test_embedded_json_cannot_close_its_script_element(client):
    page = client.get("/?model=</script><b>x")
    assert page.text.count("</script>") == page.text.count("<script")
    # The page still parses: the value made it through escaped, or the core refused it.
    data = page_data(page.text)
    assert data["errors"] or data["model"]["scenario"]["model"] == "</script><b>x"


def test_a_page_in_chinese_renders_chinese_labels(client):
    page = client.get("/flow?lang=zh")
    assert '<html lang="zh-CN">' in page.text
    assert i18n.strings("zh")["flow.title"] in page.text
    assert i18n.strings("en")["flow.title"] not in page.text


def test_navigation_links_keep_the_scenario(client):
    page = client.get("/?dp=4&schedule=gpipe&rank=3")
    assert 'href="/flow?dp=4&amp;schedule=gpipe&amp;rank=3"' in page.text


def test_plotly_is_served_from_the_installed_package_at_a_versioned_url(client):
    page = client.get("/flow")
    src = re.search(r'<script defer src="(/vendor/plotly-[^"]+\.min\.js)">', page.text).group(1)
    assert src == assets.plotly_url(assets.plotly_js_version())
    # The overview fetches it only when it has a chart to draw, from the same URL.
    assert f'data-plotly-src="{src}"' in client.get("/").text
    js = client.get(src)
    assert js.status_code == 200
    assert js.headers["content-type"].startswith("text/javascript")
    assert "immutable" in js.headers["cache-control"]
    assert js.content[:40].decode().lstrip("/* \n").startswith("plotly.js v")
    assert client.get("/vendor/plotly-0.0.0.min.js").status_code == 404


def test_nothing_in_templates_or_static_points_off_the_server():
    texts = [
        p.read_text()
        for p in [*ROOT.glob("templates/**/*.html"), *ROOT.glob("static/**/*")]
        if p.is_file() and p.suffix in {".html", ".js", ".css", ".svg"}  # fonts are binary
    ]
    assert len(texts) > 20
    for text in texts:
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
        assert not re.search(r"""(fetch|import)\s*\(\s*["'`]https?:""", text)


PAGES = (
    "/",
    "/flow",
    "/compare",
    "/trend",
    "/primer",
    "/plan",
    "/fidelity",
    "/runs",
    "/runs/some-run",
)


@pytest.mark.parametrize("path", PAGES)
def test_each_page_loads_under_100_kb_of_our_own_js_and_css(client, path):
    from asset_budget import page_files

    page = client.get(path)
    # No run is stored here: /runs/some-run is the unknown-run 404 page (the live page's
    # budget is checked in tests/live/test_run_pages.py, with a run announced).
    assert page.status_code == (404 if path == "/runs/some-run" else 200)
    files = page_files(page.text)
    assert any(f.suffix == ".js" for f in files) and any(f.suffix == ".css" for f in files)
    assert all(f.exists() for f in files)  # every import resolves to a file we ship
    total = sum(f.stat().st_size for f in files)
    assert total < 100_000, (total, sorted(f.name for f in files))


def test_every_string_exists_in_both_languages():
    en, zh = i18n.strings("en"), i18n.strings("zh")
    for key in en:
        assert en[key].strip() and zh[key].strip(), key
    assert set(en) == set(zh)


def test_every_scenario_field_has_a_label():
    missing = [f for f in Scenario.model_fields if f"field.{f}" not in i18n.strings("en")]
    assert missing == []


def test_the_trace_is_a_download_of_chrome_trace_json(client):
    res = client.get("/api/trace?pp=4&microbatches=4&f_time=1")
    assert res.status_code == 200
    assert "attachment" in res.headers["content-disposition"]
    assert {"traceEvents", "displayTimeUnit"} <= set(res.json())


@pytest.mark.parametrize("path", ["/api/trace", "/api/flow", "/api/orders"])
@pytest.mark.parametrize("query", ["dp=0", "f_time=nan", "bogus=1", "schedule=interleaved&pp=3"])
def test_derived_apis_answer_422_not_500(client, path, query):
    assert client.get(f"{path}?{query}").status_code == 422


def test_static_modules_are_served_as_javascript(client):
    res = client.get("/static/js/state.js")
    assert res.status_code == 200
    assert "javascript" in res.headers["content-type"]


def test_a_page_for_16384_ranks_renders(client):
    res = client.get("/?dp=256&tp=8&pp=8")
    assert res.status_code == 200
    assert page_data(res.text)["model"]["layout"]["world_size"] == 16384


def test_pages_do_not_depend_on_cost_keys_but_carry_them_when_present(client):
    # Whatever the core adds (memory, comm, advice...) reaches the page unchanged; the web
    # layer adds only the error band beside the step time (app/api/fidelity.py).
    data = page_data(client.get("/").text)
    band = data["model"].pop("error_band")
    assert data["model"] == evaluate(Scenario())
    assert band == client.app.state.fidelity.band(Scenario())


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_links_to_every_view_and_each_link_opens(client, path, lang):
    page = client.get(f"{path}?lang={lang}")
    nav = re.search(r"<nav>(.*?)</nav>", page.text, re.S).group(1)
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r'href="([^"]+)"', nav)]
    targets = {h.split("?")[0] for h in hrefs}
    assert {"/", "/flow", "/compare", "/trend", "/plan", "/runs", "/fidelity"} <= targets, hrefs
    for href in hrefs:
        opened = client.get(href)
        assert opened.status_code == 200, href
        if lang == "zh" and not href.startswith("/api/"):
            assert '<html lang="zh-CN">' in opened.text, href  # the language travels along
