"""GET /api/plan: valid, sorted, explained, and 422 on bad input."""

import pytest

from app.core.inputs.scenario import Scenario


def test_plan_results_are_valid_fitting_and_sorted(client):
    body = client.get("/api/plan?model=llama3-8b&hardware=h100-sxm&gpus=16&global_batch=64").json()
    rows = body["results"]
    assert rows and body["searched"] >= len(rows)
    speeds = [r["tokens_per_s"] for r in rows]
    assert speeds == sorted(speeds, reverse=True)
    for r in rows:
        assert r["dp"] * r["tp"] * r["pp"] == 16 and r["fits"]
        assert r["tp"] <= 8  # TP stays inside a node
        assert r["dp"] * r["micro_batch_size"] * r["microbatches"] == 64
        again = client.get("/api/scenario", params=r["query"]).json()
        assert again["tokens_per_s"] == pytest.approx(r["tokens_per_s"])
        Scenario(**r["query"])  # every row is a shareable scenario link
    assert rows[0]["reason"].startswith("fastest that fits")
    # The why is the row's own numbers, so a page can word it in any language.
    assert [r["why"]["lead"] for r in rows] == ["fastest"] + ["of_best"] * (len(rows) - 1)
    for r in rows:
        why, again = r["why"], client.get("/api/scenario", params=r["query"]).json()
        assert why["of_best"] == pytest.approx(r["tokens_per_s"] / speeds[0])
        assert why["memory"] == pytest.approx(r["peak_bytes"] / again["memory"]["capacity_bytes"])
        assert why["tp_share"] == pytest.approx(again["breakdown"]["tp_s"] / r["step_time_s"])
        assert f"memory {why['memory']:.0%} of HBM" in r["reason"]


def test_a_model_that_fits_nowhere_returns_no_results_but_says_why(client):
    body = client.get("/api/plan?model=gpt3-175b&hardware=a100-80g&gpus=8&global_batch=8").json()
    assert body["results"] == []
    assert body["not_fitting"] and "does not fit" in body["not_fitting"][0]["reason"]
    assert {r["why"]["lead"] for r in body["not_fitting"]} == {"misfit"}
    assert all(r["why"]["memory"] > 1 for r in body["not_fitting"])


@pytest.mark.parametrize(
    "query,field",
    [("gpus=0", "gpus"), ("model=nope", "model"), ("hardware=tpu", "hardware"), ("x=1", "x")],
)
def test_bad_plan_input_is_a_422_naming_the_field(client, query, field):
    r = client.get(f"/api/plan?{query}")
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == field
