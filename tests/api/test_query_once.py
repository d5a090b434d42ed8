"""A link's parameters are taken as written or refused by name, never guessed:

- a parameter given twice (``dp=2&dp=4``) is a 422 naming it (it used to draw whichever came
  last), except a route's own list parameters (the comparison's ``s``);
- the JSON routes that read plain parameters (/api/hardware, /api/fidelity, /api/runs and a
  run's routes) refuse one they do not declare, as the query-model routes already did;
- a browser opening a page link with a bad parameter gets a 422 *page* in the link's
  language naming it, with the link without it; every other client keeps the JSON 422.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ZH = json.loads((ROOT / "app/i18n/locales/zh.json").read_text())
HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def test_a_parameter_given_twice_is_refused_by_name(client):
    res = client.get("/api/scenario?dp=2&tp=2&dp=4")
    assert res.status_code == 422
    (problem,) = res.json()["detail"]
    assert problem["loc"] == ["query", "dp"] and problem["type"] == "query_repeated"
    assert problem["ctx"] == {"times": 2}
    assert client.get("/api/scenario?dp=2&tp=2").status_code == 200


def test_the_comparisons_scenarios_may_repeat_and_its_other_keys_may_not(client):
    both = "s=dp%3D2&s=dp%3D4"
    assert client.get(f"/api/compare?{both}").json()["count"] == 2
    assert client.get(f"/compare?{both}").status_code == 200
    twice = client.get(f"/api/compare?{both}&preset=factory&preset=schedules")
    assert twice.status_code == 422 and twice.json()["detail"][0]["loc"] == ["query", "preset"]


@pytest.mark.parametrize(
    "path", ["/api/hardware", "/api/fidelity", "/api/runs", "/api/runs/x", "/api/runs/x/steps",
             "/api/runs/x/actions", "/api/runs/x/stragglers"],
)  # fmt: skip
def test_json_routes_refuse_a_parameter_they_do_not_take(client, path):
    res = client.get(f"{path}?stpe=3")
    assert res.status_code == 422, path
    assert res.json()["detail"] == [
        {"loc": ["query", "stpe"], "msg": "unknown parameter", "type": "extra_forbidden"}
    ]


def test_declared_parameters_still_pass(client):
    assert client.get("/api/runs?lang=zh").status_code == 200
    assert client.get("/api/runs/nobody?lang=zh").status_code == 404  # past the guard


def test_a_browser_gets_a_page_that_names_the_parameter_in_its_language(client):
    page = client.get("/runs/some-run?step=abc&lang=zh", headers=HTML)
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert '<html lang="zh-CN">' in page.text and ZH["live"]["invalid.title"] in page.text
    assert "<code>step</code>: " + ZH["errors"]["err.int_parsing"] in page.text
    assert re.search(r'id="invalid-retry" href="/runs/some-run\?lang=zh"', page.text)
    flow = client.get("/flow?dp=2&dp=4&tp=2", headers=HTML)
    assert flow.status_code == 422
    assert "<code>dp</code>: given 2 times; give it once" in flow.text
    assert 'href="/flow?tp=2"' in flow.text
    zh = client.get("/flow?dp=2&dp=4&lang=zh", headers=HTML).text
    assert ZH["errors"]["err.query_repeated"].format(times=2) in zh


def test_a_bad_run_name_offers_the_run_list_and_other_clients_keep_json(client):
    page = client.get("/runs/bad%20name", headers=HTML)
    assert page.status_code == 422 and 'id="invalid-retry" href="/runs"' in page.text
    plain = client.get("/runs/some-run?step=abc")
    assert plain.status_code == 422 and plain.json()["detail"][0]["loc"] == ["query", "step"]
    api = client.get("/api/scenario?dp=2&dp=4", headers=HTML)  # an API route stays JSON
    assert api.headers["content-type"] == "application/json"


def test_every_operation_documents_the_422_it_can_answer(client):
    # /healthz, /metrics, /api/hardware and /api/fidelity said only 200 and 400, though a
    # repeated parameter (and, on the last two, an unknown one) is a 422 there too.
    spec = client.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            assert "422" in op["responses"], (method, path)
    assert client.get("/healthz?probe=1&probe=2").status_code == 422
    assert client.get("/api/fidelity?view=x").status_code == 422
