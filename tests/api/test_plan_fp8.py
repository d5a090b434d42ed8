"""The planner prices every row with the FP8 recipe the user names (fp8=, issue 27): the
recipe is a choice of numerics, so the planner never picks it, but plans with it when asked;
hardware without FP8 gets a 422 naming fp8, on the API and on the page."""

import pytest

Q = "/api/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64&top=3"


def test_every_row_runs_the_recipe_and_opens_as_its_scenario(client):
    plain = client.get(Q).json()["results"]
    fp8 = client.get(Q + "&fp8=tensorwise").json()["results"]
    assert fp8 and all(r["query"]["fp8"] == "tensorwise" for r in fp8)
    assert all("fp8" not in r["query"] for r in plain)
    assert fp8[0]["tokens_per_s"] > plain[0]["tokens_per_s"]
    for row in fp8:  # each link prices what the row says
        got = client.get("/api/scenario", params=row["query"]).json()
        assert got["tokens_per_s"] == pytest.approx(row["tokens_per_s"], rel=1e-9)


@pytest.mark.parametrize(
    ("q", "words"),
    [("&hardware=a100-80g&fp8=tensorwise", "no FP8"), ("&fp8=mxfp8", "Blackwell")],
)
def test_a_recipe_the_hardware_lacks_is_refused_naming_fp8(client, q, words):
    r = client.get(Q + q)
    assert r.status_code == 422
    detail = r.json()["detail"][0]
    assert detail["loc"][-1] == "fp8" and words in detail["msg"]


def test_the_page_offers_the_recipes_and_shows_the_refusal(client):
    page = client.get(
        "/plan?model=llama3-8b&hardware=a100-80g&gpus=16&global_batch=64&fp8=blockwise"
    )
    assert page.status_code == 422
    assert 'name="fp8"' in page.text and "tensorwise" in page.text
    assert "no FP8 tensor cores" in page.text


def test_the_page_says_mfu_is_against_the_bf16_peak(client):
    page = client.get(
        "/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64&fp8=tensorwise"
    )
    assert page.status_code == 200 and 'id="plan-fp8"' in page.text
    assert "bf16 peak" in page.text
    plain = client.get("/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64")
    assert 'id="plan-fp8"' not in plain.text
