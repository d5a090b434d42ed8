"""GET /api/sweep, /trend and /plan: the JSON contract, the pages, and 422 naming the field."""

import math

import pytest
from page_html import PAGE_DATA, error_beside, page_data

from app import i18n
from app.core.evaluate.sweep import SweepParams, sweep
from app.core.inputs.scenario import Scenario


def test_the_sweep_json_contract(client):
    res = client.get("/api/sweep?pp=4&f_time=1&knob=microbatches&start=1&stop=8")
    assert res.status_code == 200
    body = res.json()
    assert body["knob"] == "microbatches" and body["values"] == list(range(1, 9))
    assert body["series"] == "schedule"
    assert body["base"] == {"pp": "4", "f_time": "1.0"}
    assert body["count"] == sum(len(li["points"]) for li in body["lines"])
    metrics = {"bubble_fraction", "bubble_over_ideal", "peak_bytes", "capacity_bytes", "fits"}
    metrics |= {"step_time_s", "tokens_per_s", "tp_share", "pp_share", "dp_share", "mfu"}
    invalid = 0
    for li in body["lines"]:
        assert [p["x"] for p in li["points"]] == body["values"]
        for p in li["points"]:
            if p["valid"]:
                assert metrics <= set(p)
                assert all(math.isfinite(p[k]) for k in metrics - {"fits"})
                assert client.get("/api/scenario", params=p["query"]).status_code == 200
            else:
                invalid += 1
                assert p["field"] and p["reason"]
    assert invalid == body["invalid"] > 0
    assert body == sweep(Scenario(pp=4, f_time=1), SweepParams(stop=8))


def test_the_sweep_is_documented_in_openapi(client):
    op = client.get("/openapi.json").json()["paths"]["/api/sweep"]["get"]
    names = {p["name"] for p in op["parameters"]}
    assert {"knob", "values", "start", "stop", "series", "series_values", "dp", "pp"} <= names
    assert "422" in op["responses"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("knob=bogus", "knob"),
        ("series=bogus", "series"),
        ("stop=1000", "stop"),
        ("start=9&stop=3", "stop"),
        ("stop=nan", "stop"),
        ("start=inf", "start"),
        ("values=1,nan", "values"),
        ("values=" + ",".join(map(str, range(1, 80))), "values"),
        ("series=pp&series_values=1,2,3,4,5,6,7,8,9", "series_values"),
        ("series=pp", "series_values"),
        ("stop=64&series=tp&series_values=1,2,4,8,16", "stop"),
        ("knob=microbatches&series=dp_fixed_global_batch&series_values=2", "series"),
        ("f_time=nan", "f_time"),
        ("dp=0", "dp"),
        ("bogus=1", "bogus"),
        ("model=gpt3-175b&pp=32&start=64&stop=1024&step=64&series=none", "stop"),
    ],
)
def test_bad_input_gets_a_422_naming_the_field(client, query, field):
    res = client.get(f"/api/sweep?{query}")
    assert res.status_code == 422, res.text
    detail = res.json()["detail"]
    assert detail[0]["loc"][-1] == field
    assert detail[0]["msg"]


def test_the_trend_page_embeds_the_sweep_the_api_returns(client):
    query = "pp=4&knob=pp&values=1,2,4&series=none&lang=zh&open=flow"
    page = client.get(f"/trend?{query}")
    assert page.status_code == 200
    data = page_data(page.text)
    api = client.get("/api/sweep?pp=4&knob=pp&values=1,2,4&series=none").json()
    assert data["sweep"] == api
    assert data["state"]["lang"] == "zh" and data["state"]["open"] == "flow"
    assert data["errors"] == {}
    assert i18n.strings("zh")["trend.chart.memory"] in page.text
    assert i18n.strings("en")["trend.chart.memory"] not in page.text
    # The nav link to the overview keeps the scenario and drops the sweep's own keys.
    assert 'href="/?pp=4&amp;lang=zh"' in page.text


@pytest.mark.parametrize(
    ("query", "field"),
    [("knob=bad", "knob"), ("stop=1000", "stop"), ("dp=0", "dp"), ("open=x", "open"),
     ("lang=fr", "lang")],
)  # fmt: skip
def test_a_bad_trend_url_renders_the_page_with_the_reason_beside_its_control(client, query, field):
    page = client.get(f"/trend?{query}")
    assert page.status_code == 422
    assert 'id="sweep-form"' in page.text and 'id="controls"' in page.text
    data = page_data(page.text)
    assert data["sweep"] is None and field in data["errors"]
    if field != "lang":
        assert error_beside(page.text, field)


def test_an_unknown_trend_parameter_goes_to_the_banner(client):
    page = client.get("/trend?bogus=1")
    assert page.status_code == 422
    assert "<li><code>bogus</code>" in page.text


PLAN = "model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64"


def test_the_plan_page_embeds_the_plan_and_links_every_row(client):
    page = client.get(f"/plan?{PLAN}")
    assert page.status_code == 200
    data = page_data(page.text)
    api = client.get(f"/api/plan?{PLAN}").json()
    assert data["plan"] == api
    for row in api["results"] + api["not_fitting"]:
        q = "&amp;".join(f"{k}={v}" for k, v in row["query"].items())
        assert f'href="/?{q}"' in page.text and f'href="/flow?{q}"' in page.text
    assert f"{api['searched']} configurations searched" in page.text


def test_the_plan_page_in_chinese_says_its_reasons_in_chinese(client):
    page = client.get(f"/plan?{PLAN}&lang=zh")
    assert page.status_code == 200
    zh = i18n.strings("zh")
    shown = PAGE_DATA.sub("", page.text)  # the embedded JSON keeps the API's own words
    assert zh["plan.reason.fastest"] in shown
    assert "fastest that fits" not in shown and "of the best" not in shown
    assert 'href="/?' in page.text and "lang=zh" in page.text


@pytest.mark.parametrize(
    ("query", "field"),
    [("gpus=0", "gpus"), ("gpus=abc", "gpus"), ("model=nope", "model"),
     ("hardware=nope", "hardware"), ("top=99", "top"), ("global_batch=nan", "global_batch")],
)  # fmt: skip
def test_a_bad_plan_url_renders_the_form_with_the_reason_beside_it(client, query, field):
    page = client.get(f"/plan?{query}")
    assert page.status_code == 422
    assert 'id="plan-form"' in page.text
    assert error_beside(page.text, field)
    assert page_data(page.text)["plan"] is None


def test_an_unknown_plan_parameter_goes_to_the_banner(client):
    page = client.get("/plan?bogus=1")
    assert page.status_code == 422
    assert "<li><code>bogus</code>" in page.text
