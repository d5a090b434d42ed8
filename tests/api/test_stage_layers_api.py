"""stage_layers over HTTP: a 422 that names the field and the rule, the share link, the
stage balance in the JSON, and the card on the overview and flow pages."""

import pytest


@pytest.mark.parametrize(
    "query,rule",
    [
        ("pp=4&stage_layers=8,8,8,7", "sum vs layers"),
        ("pp=4&stage_layers=16,16", "length vs pp*chunks"),
        ("pp=2&schedule=interleaved&virtual_stages=2&stage_layers=16,16", "length vs pp*chunks"),
        ("pp=4&stage_layers=8,0,16,8", "out of bounds"),
        ("pp=4&stage_layers=8,8,8,99999999", "out of bounds"),
        ("pp=4&stage_layers=8,a,8,8", "whole number"),
        ("pp=4&stage_layers=", "whole number"),
    ],
)
def test_a_bad_split_is_a_422_naming_stage_layers_and_the_rule(client, query, rule):
    r = client.get(f"/api/scenario?{query}")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert any(d["loc"][-1] == "stage_layers" and rule in d["msg"] for d in detail), detail


def test_the_split_round_trips_and_reaches_the_json(client):
    body = client.get("/api/scenario?pp=4&dp=1&stage_layers=7,%209,9,7").json()
    assert body["query"]["stage_layers"] == "7,9,9,7"
    again = client.get("/api/scenario", params=body["query"]).json()
    assert again["scenario"] == body["scenario"]
    balance = body["stage_balance"]
    assert balance["given"] and balance["split"] == [7, 9, 9, 7]
    assert [s["total_layers"] for s in balance["per_stage"]] == [7, 9, 9, 7]
    assert max(s["of_slowest"] for s in balance["per_stage"]) == 1.0
    assert balance["per_stage"][0]["embedding"] and balance["per_stage"][3]["head"]


def test_llama3_405b_on_16_stages_answers(client):
    for extra in ("", "&schedule=interleaved&virtual_stages=2"):
        r = client.get(f"/api/scenario?model=llama3-405b&tp=8&dp=1&pp=16&microbatches=16{extra}")
        assert r.status_code == 200, r.text
        assert sum(r.json()["stage_balance"]["split"]) == 126


@pytest.mark.parametrize("page", ["/", "/flow"])
@pytest.mark.parametrize("lang,title", [("en", "Layers and time per pipeline stage"),
                                        ("zh", "各流水线阶段的层数与时间")])  # fmt: skip
def test_the_overview_and_flow_pages_carry_the_balance_card(client, page, lang, title):
    r = client.get(f"{page}?pp=4&stage_layers=7,9,9,7&lang={lang}")
    assert r.status_code == 200, r.text
    assert 'id="card-balance"' in r.text and title in r.text


def test_a_bad_split_renders_the_page_with_the_reason_beside_its_control(client):
    r = client.get("/?pp=4&stage_layers=8,8,8,7")
    assert r.status_code == 422
    assert 'data-err-for="stage_layers">' in r.text and "sum vs layers" in r.text
