"""GET /api/scenario: the stable JSON contract and its 422s."""

import pytest

from app.core.schedules import ScheduleName

SCHEDULE_QUERIES = {
    "naive": "schedule=naive",
    "gpipe": "schedule=gpipe",
    "1f1b": "schedule=1f1b",
    "interleaved": "schedule=interleaved&virtual_stages=2&microbatches=4",
    "zb-h1": "schedule=zb-h1",
    "looped-bfs": "schedule=looped-bfs&virtual_stages=2&microbatches=4",
    "zb-h2": "schedule=zb-h2&microbatches=4",
    "interleaved-zb": "schedule=interleaved-zb&virtual_stages=2&microbatches=4",
    "zbv": "schedule=zbv&microbatches=8",
    "dualpipev": "schedule=dualpipev&microbatches=8",
    "dualpipe": "schedule=dualpipe&microbatches=4",
}


def test_healthz(client):
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.parametrize("name", [s.value for s in ScheduleName])
def test_contract_answers_for_every_schedule(client, name):
    r = client.get(f"/api/scenario?{SCHEDULE_QUERIES[name]}&f_time=1&b_time=2")
    assert r.status_code == 200, r.text
    body = r.json()
    layout = body["layout"]
    assert layout["world_size"] == 8 and layout["order"] == "tp-pp-dp"
    assert layout["ranks"][5] == {"rank": 5, "dp": 1, "pp": 0, "tp": 1, "node": 0}
    assert layout["groups"]["dp"][1] == [1, 5]
    assert set(layout["crosses_node"]) == {"tp", "pp", "dp"}
    sched = body["schedule"]
    assert sched["name"] == name and len(sched["actions"]) == 2
    tl = body["timeline"]
    assert {"events", "makespan", "bubble_fraction", "bubble_over_ideal", "peak_inflight"} <= set(
        tl
    )
    assert set(tl["events"][0]) == {"stage", "kind", "microbatch", "chunk", "start", "end"}
    n_actions = sum(len(rank) for rank in sched["actions"])
    assert len(tl["events"]) == n_actions


def test_teaching_units_give_the_papers_bubble(client):
    body = client.get("/api/scenario?pp=4&dp=1&tp=1&microbatches=8&f_time=1&b_time=1").json()
    assert body["timeline"]["bubble_fraction"] == pytest.approx(3 / 11)
    assert body["timeline"]["units"] == "abstract"


def test_query_round_trips_into_the_same_scenario(client):
    first = client.get("/api/scenario?pp=4&schedule=gpipe&microbatches=6&order=megatron").json()
    again = client.get("/api/scenario", params=first["query"]).json()
    assert again["scenario"] == first["scenario"]
    assert first["scenario"]["order"] == "tp-dp-pp"


@pytest.mark.parametrize(
    "query,field,reason",
    [
        ("dp=0", "dp", "greater than or equal to 1"),
        ("dp=512&tp=16&pp=16", "dp", "65536"),
        ("schedule=bogus", "schedule", "Input should be"),
        ("order=tp-dp-dp", "order", "permutation"),
        ("schedule=interleaved", "virtual_stages", ">= 2"),
        ("schedule=interleaved&virtual_stages=2&microbatches=5", "microbatches", "2 rounds"),
        ("f_time=nan", "f_time", "finite"),
        ("f_time=inf", "f_time", "finite"),
        ("peak_tflops=-inf", "peak_tflops", ""),
        ("hello=1", "hello", "Extra inputs"),
        ("microbatches=4096&pp=256&dp=1&tp=1", "microbatches", "too large"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client, query, field, reason):
    r = client.get(f"/api/scenario?{query}")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert any(d["loc"][-1] == field and reason in d["msg"] for d in detail), detail


def test_openapi_documents_the_scenario_parameters(client):
    spec = client.get("/openapi.json").json()
    params = {p["name"] for p in spec["paths"]["/api/scenario"]["get"]["parameters"]}
    assert {"dp", "tp", "pp", "order", "schedule", "microbatches", "f_time", "hardware"} <= params


def test_a_custom_shape_is_reported_as_custom_and_missing_shape_is_a_422_naming_it(client):
    body = client.get("/api/scenario", params=dict(layers=4, hidden=256, heads=4)).json()
    assert body["model"]["name"] == "custom" and body["model"]["gated_mlp"] is False
    r = client.get("/api/scenario", params=dict(layers=4, hidden=256))
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "heads"
    r = client.get("/api/scenario", params=dict(layers=4, hidden=256, heads=4, gated_mlp="maybe"))
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "gated_mlp"
