"""GET /api/compare and the /compare page: the JSON contract, 422s naming the field, the page."""

import re
from urllib.parse import urlencode

import pytest
from page_html import page_data

from app import i18n
from app.core.evaluate import compare, evaluate
from app.core.inputs.scenario import Scenario
from app.core.schedules import ScheduleName
from app.core.views.compare_view import bars


def q(*scenarios: dict, **extra) -> str:
    return urlencode([("s", urlencode(s)) for s in scenarios] + list(extra.items()))


def test_two_scenarios_side_by_side(client):
    res = client.get("/api/compare?" + q({"dp": 4, "tp": 2}, {"pp": 4, "schedule": "gpipe"}))
    assert res.status_code == 200
    body = res.json()
    assert body["preset"] is None and body["base"] is None
    assert [m["query"] for m in body["members"]] == [
        {"dp": "4"},
        {"pp": "4", "schedule": "gpipe"},
    ]
    second = body["members"][1]
    direct = evaluate(Scenario(pp=4, schedule="gpipe"))
    assert second["summary"]["step_time_s"] == direct["step_time_s"]
    assert second["summary"]["mfu"] == direct["mfu"]
    assert second["summary"]["tokens_per_s"] == direct["tokens_per_s"]
    # The blocks as columns (compare_view.bars): the events, then the step's tail.
    tl = direct["timeline"]
    assert second["timeline"]["bars"] == bars([*tl["events"], *tl["tail"]])
    assert len(second["timeline"]["bars"]["start"]) == len(tl["events"]) + len(tl["tail"])
    assert second["memory"] == direct["memory"]
    assert second["comm"] == direct["comm"]
    assert {r["key"] for r in body["diff"] if r["kind"] == "field"} == {"dp", "pp", "schedule"}
    assert body["time_axis"]["shared"] is True
    assert body["urlquery"] == [["s", "dp=4"], ["s", "pp=4&schedule=gpipe"]]


def test_presets_expand_server_side(client):
    factory = client.get("/api/compare?preset=factory&dp=2&tp=2&pp=2").json()
    assert [m["role"] for m in factory["members"]] == ["dp_only", "tp_only", "pp_only", "3d"]
    schedules = client.get("/api/compare?preset=schedules&pp=4&microbatches=8").json()
    assert len(schedules["members"]) == len(ScheduleName)
    assert client.get("/api/compare").json()["base"] == dict(compare.TEACHING_BASE)


def test_the_api_is_documented(client):
    op = client.get("/openapi.json").json()["paths"]["/api/compare"]["get"]
    assert {p["name"] for p in op["parameters"]} >= {"s", "preset"}
    assert "422" in op["responses"]


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        (q({"dp": 2}), ["query", "s"]),
        (q(*[{"dp": 2}] * 5), ["query", "s"]),
        (q({"dp": 2}, {"dp": "abc"}), ["query", "s", 1, "dp"]),
        (q({"dp": 2}, {"tp": 0}), ["query", "s", 1, "tp"]),
        (q({"f_time": "nan"}, {"dp": 2}), ["query", "s", 0, "f_time"]),
        (q({"hbm_gib": "inf"}, {"dp": 2}), ["query", "s", 0, "hbm_gib"]),
        (q({"dp": 2}, {"bogus": 1}), ["query", "s", 1, "bogus"]),
        (q({"dp": 2}, {"schedule": "interleaved", "pp": 3}), ["query", "s", 1, "virtual_stages"]),
        ("preset=nope", ["query", "preset"]),
        ("preset=factory&f_time=nan", ["query", "f_time"]),
        ("preset=factory&lang=zh", ["query", "lang"]),
        (q({"dp": 2}, {"dp": 2}, preset="factory"), ["query", "preset"]),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client, query, loc):
    res = client.get(f"/api/compare?{query}")
    assert res.status_code == 422
    detail = res.json()["detail"]
    assert loc in [d["loc"] for d in detail]
    assert all(d["msg"] for d in detail)


def test_the_page_embeds_the_api_s_json(client):
    query = q({"dp": 4}, {"tp": 4})
    page = client.get(f"/compare?{query}")
    assert page.status_code == 200
    data = page_data(page.text)
    assert data["comparison"] == client.get(f"/api/compare?{query}").json()
    assert data["errors"] == {}
    assert 'id="columns"' in page.text
    assert 'data-nav="compare"' in page.text and 'aria-current="page"' in page.text


def test_the_bare_page_shows_the_factory_comparison(client):
    data = page_data(client.get("/compare").text)
    assert data["comparison"]["preset"] == "factory"
    assert len(data["comparison"]["members"]) == 4


def test_a_bad_page_url_is_a_422_with_the_reason(client):
    page = client.get("/compare?" + q({"dp": 2}, {"dp": 0}))
    assert page.status_code == 422
    data = page_data(page.text)
    assert data["comparison"] is None
    assert "s.1.dp" in data["errors"]
    assert "<code>s.1.dp</code>" in page.text
    assert i18n.strings("en")["cmp.error.fix"] in page.text


def test_the_page_in_chinese(client):
    page = client.get("/compare?lang=zh")
    assert page.status_code == 200
    assert '<html lang="zh-CN">' in page.text
    assert i18n.strings("zh")["cmp.intro"] in page.text
    assert i18n.strings("en")["cmp.intro"] not in page.text
    assert page_data(page.text)["strings"]["cmp.title"] == i18n.strings("zh")["cmp.title"]
    assert client.get("/compare?lang=xx").status_code == 422


def test_other_pages_link_to_the_comparison_of_their_scenario(client):
    assert 'data-nav="compare" href="/compare?preset=factory&amp;dp=4"' in client.get("/?dp=4").text
    assert 'data-nav="compare" href="/compare?"' in client.get("/flow").text


def test_every_compare_string_has_both_languages():
    groups = i18n.default().groups
    for key, en in groups["en"]["compare"].items():
        zh = groups["zh"]["compare"][key]
        assert en.strip() and zh.strip(), key
        assert set(re.findall(r"\{\w+\}", en)) == set(re.findall(r"\{\w+\}", zh)), key
