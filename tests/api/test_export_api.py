"""GET /api/export: 200 with the text (or ok: false and why) per format; 422 naming the
field for a bad format or scenario."""

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the project also runs on 3.10


@pytest.mark.parametrize(
    "fmt,framework,version",
    [("megatron", "Megatron-LM", "core_v0.15.3"), ("torchtitan", "torchtitan", "v0.2.2"),
     ("torch-csv", "PyTorch", "2.13.0")],
)  # fmt: skip
def test_each_format_names_its_framework_release(client, fmt, framework, version):
    res = client.get(f"/api/export?format={fmt}&dp=2&tp=2&pp=4&microbatches=8")
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["ok"] and (body["framework"], body["version"]) == (framework, version)
    assert body["source"] and len(body["commit"]) >= 6
    if fmt == "megatron":
        assert "--pipeline-model-parallel-size 4" in body["text"]
    elif fmt == "torchtitan":
        assert tomllib.loads(body["text"])["parallelism"]["pipeline_parallel_degree"] == 4
    else:
        assert len(body["text"].splitlines()) == 4  # one row per pipeline rank


def test_a_configuration_the_framework_cannot_run_is_a_200_saying_why(client):
    res = client.get("/api/export?format=torch-csv&schedule=zb-h2&pp=4&microbatches=8")
    assert res.status_code == 200
    body = res.json()
    assert body["ok"] is False and body["text"] == ""
    assert body["cannot"]["code"] == "torch_schedule" and "zb-h2" in body["cannot"]["reason"]


def test_the_pages_language_and_format_are_not_taken_for_scenario_fields(client):
    assert client.get("/api/export?format=megatron&lang=zh").status_code == 200


def _loc(res) -> list:
    assert res.status_code == 422, res.text
    return res.json()["detail"][0]["loc"]


def test_an_unknown_format_is_a_422_naming_format(client):
    assert _loc(client.get("/api/export?format=deepspeed")) == ["query", "format"]


def test_a_missing_format_is_a_422_naming_format(client):
    assert _loc(client.get("/api/export?dp=2")) == ["query", "format"]


@pytest.mark.parametrize(
    "query,field",
    [("dp=0", "dp"), ("schedule=nope", "schedule"), ("bogus=1", "bogus"),
     ("schedule=interleaved&virtual_stages=1", "virtual_stages"),
     ("model=nope", "model"), ("stage_layers=1,2", "stage_layers")],
)  # fmt: skip
def test_a_bad_scenario_is_a_422_naming_the_field(client, query, field):
    assert _loc(client.get(f"/api/export?format=megatron&{query}")) == ["query", field]
