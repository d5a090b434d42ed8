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
    [("hardware=a100-80g&fp8=tensorwise", "no FP8"), ("hardware=h100-sxm&fp8=mxfp8", "Blackwell")],
)
def test_a_recipe_the_hardware_lacks_is_refused_naming_fp8(client, q, words):
    r = client.get(Q.replace("hardware=h100-sxm", q))  # hardware once: a repeat is a 422
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


SEARCH = "/api/plan?model=llama3-8b&gpus=16&global_batch=64&top=3&fp8=search"


def test_search_picks_a_recipe_and_says_what_bf16_takes(client):
    """fp8=search on H100: the first row runs tensorwise FP8, the answer names it and the
    fastest bf16 plan (the fp8=none answer's first row), and every row's link opens."""
    got = client.get(SEARCH + "&hardware=h100-sxm").json()
    plain = client.get(Q).json()["results"][0]
    best, found = got["results"][0], got["fp8"]
    assert best["fp8"] == best["query"]["fp8"] == found["chosen"] == "tensorwise"
    assert found["searched"] == ["none", "tensorwise"] and found["fp8_hardware"]
    assert found["bf16"]["tokens_per_s"] == plain["tokens_per_s"]
    assert found["bf16"]["query"] == plain["query"] and found["speedup"] > 1.0
    for row in got["results"]:
        scenario = client.get("/api/scenario", params=row["query"]).json()
        assert scenario["tokens_per_s"] == pytest.approx(row["tokens_per_s"], rel=1e-9)


def test_search_on_hardware_without_fp8_plans_bf16_and_says_so(client):
    """fp8=search asks for the best numerics the hardware allows: on A100 that is bf16, a
    200 that says so, while a named recipe there stays a 422 naming fp8."""
    got = client.get(SEARCH + "&hardware=a100-80g")
    assert got.status_code == 200
    body = got.json()
    assert all(r["fp8"] == "none" and "fp8" not in r["query"] for r in body["results"])
    assert body["fp8"] == {"searched": ["none"], "chosen": "none", "hardware": "a100-80g",
                           "fp8_hardware": False, **{k: body["fp8"][k] for k in ("bf16",
                           "speedup")}}  # fmt: skip
    named = client.get(SEARCH.replace("fp8=search", "fp8=tensorwise") + "&hardware=a100-80g")
    assert named.status_code == 422 and named.json()["detail"][0]["loc"][-1] == "fp8"


def test_an_unknown_fp8_value_is_refused_naming_fp8(client):
    r = client.get(SEARCH.replace("fp8=search", "fp8=fp4") + "&hardware=h100-sxm")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "fp8"
    assert "search" in r.json()["detail"][0]["msg"]


@pytest.mark.parametrize(("lang", "words"), [("en", "FP8 searched"), ("zh", "已搜索 FP8")])
def test_the_page_shows_the_search_and_the_bf16_plan(client, lang, words):
    page = client.get(
        "/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64&fp8=search"
        + ("&lang=zh" if lang == "zh" else "")
    )
    assert page.status_code == 200
    assert 'id="plan-fp8-search"' in page.text and words in page.text
    assert 'data-axis="fp8"' in page.text and 'data-open="bf16"' in page.text
    assert '<option value="search"' in page.text
    assert 'id="plan-fp8"' in page.text  # MFU against the bf16 peak, as for a named recipe
    bare = client.get(
        "/plan?model=llama3-8b&hardware=a100-80g&gpus=16&global_batch=64&fp8=search"
        + ("&lang=zh" if lang == "zh" else "")
    )
    assert bare.status_code == 200 and 'data-axis="fp8"' not in bare.text
    assert ("no FP8 tensor cores" if lang == "en" else "没有 FP8 张量核心") in bare.text


def test_the_plan_takes_every_recipe_and_search():
    from typing import get_args

    from app.api.plan import PlanFp8
    from app.core.evaluate.planner_fp8 import SEARCH
    from app.core.inputs.training import Fp8Recipe

    assert set(get_args(PlanFp8)) == {*get_args(Fp8Recipe), SEARCH}
