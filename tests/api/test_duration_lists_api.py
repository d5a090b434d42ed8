"""f_time / b_time / w_time lists over HTTP: 200 with the list in the share link, 422 naming
the field and the allowed lengths, on the API, the pages and the sweep."""

import pytest
from page_html import error_beside, page_data

BASE = "dp=1&tp=1&pp=4&microbatches=8"


def test_a_per_stage_list_answers_and_keeps_its_canonical_spelling(client):
    res = client.get(f"/api/scenario?{BASE}&f_time=1,1,1,1.5&b_time=2")
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["query"]["f_time"] == "1.0,1.0,1.0,1.5"
    f = {e["stage"]: e["end"] - e["start"] for e in body["timeline"]["events"] if e["kind"] == "F"}
    assert f == {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.5}
    again = client.get("/api/scenario", params=body["query"]).json()
    assert again["timeline"] == body["timeline"]


@pytest.mark.parametrize(
    "query,field,words",
    [
        ("f_time=1,1,1", "f_time", "allowed: 1 (the same for every chunk), pp = 4"),
        ("f_time=1&b_time=1,2,3,4,5", "b_time", "5 entries"),
        ("schedule=interleaved&virtual_stages=2&f_time=1,2,3", "f_time", "pp*chunks = 4*2 = 8"),
        ("f_time=1,abc,1,1", "f_time", "entry 1 is not a number"),
        ("f_time=1&w_time=0,0,0,nan", "w_time", "entry 3 is not a finite number"),
        ("f_time=1," + ",".join(["1"] * 1100), "f_time", "at most 1024 entries"),
    ],
)
def test_a_bad_list_is_a_422_naming_the_field_and_the_allowed_lengths(client, query, field, words):
    res = client.get(f"/api/scenario?{BASE}&{query}")
    assert res.status_code == 422, res.text
    (detail,) = res.json()["detail"]
    assert detail["loc"] == ["query", field] and words in detail["msg"], detail


@pytest.mark.parametrize("path", ["/", "/flow"])
def test_the_page_shows_the_list_error_beside_its_control(client, path):
    page = client.get(f"{path}?{BASE}&f_time=1,2")
    assert page.status_code == 422
    assert page_data(page.text)["model"] is None
    assert "pp = 4 (one per pipeline stage)" in error_beside(page.text, "f_time")


def test_the_page_renders_a_list_in_a_text_input_with_its_value(client):
    page = client.get(f"/?{BASE}&f_time=1,1,1,1.5")
    assert page.status_code == 200
    assert 'name="f_time" value="1,1,1,1.5"' in page.text
    assert page_data(page.text)["model"]["query"]["f_time"] == "1.0,1.0,1.0,1.5"


def test_a_sweep_over_pp_keeps_the_points_a_per_stage_list_cannot_fit_with_their_reason(client):
    res = client.get(f"/api/sweep?{BASE}&f_time=1,1,1,2&knob=pp&values=2,4&series=none")
    assert res.status_code == 200, res.text
    (line,) = res.json()["lines"]
    two, four = line["points"]
    assert not two["valid"] and two["field"] == "f_time" and "pp = 2" in two["reason"]
    assert four["valid"] and four["query"]["f_time"] == "1.0,1.0,1.0,2.0"
