"""POST /api/model/from-hf-config: 200 with the query and its link, 422 naming the key, 413."""

import json
from urllib.parse import parse_qsl, urlsplit

from app.api.model_import import MAX_BODY_BYTES
from app.core.inputs.scenario import ARCH_FIELDS

ROUTE = "/api/model/from-hf-config"
# meta-llama/Llama-3.2-3B/config.json, the keys that shape the model.
LLAMA32_3B = {
    "architectures": ["LlamaForCausalLM"], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 3072, "intermediate_size": 8192, "max_position_embeddings": 131072,
    "model_type": "llama", "num_attention_heads": 24, "num_hidden_layers": 28,
    "num_key_value_heads": 8, "tie_word_embeddings": True, "vocab_size": 128256,
}  # fmt: skip


def test_a_config_answers_the_custom_query_and_its_link(client):
    res = client.post(ROUTE, json=LLAMA32_3B)
    assert res.status_code == 200
    body = res.json()
    assert body["query"] == {
        "model": "custom", "layers": 28, "hidden": 3072, "heads": 24, "kv_heads": 8,
        "vocab": 128256, "ffn_hidden": 8192, "gated_mlp": True,
        "tied_embeddings": True, "learned_positions": False,
    }  # fmt: skip
    assert body["context_length"] == 131072
    assert body["from_config"]["layers"] == "num_hidden_layers"
    assert set(body["from_config"]) == set(body["query"]) - {"model"}
    url = urlsplit(body["url"])
    assert url.path == "/"
    assert dict(parse_qsl(url.query)) == {
        k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in body["query"].items()
    }
    assert set(body["query"]) == {"model", *ARCH_FIELDS} - {"seq_len"}


def test_the_link_opens_on_that_model(client):
    url = client.post(ROUTE, json=LLAMA32_3B).json()["url"]
    # tp=1: 24 heads split over the default tp=2 too, but this keeps the check on the model.
    scenario = client.get(f"/api/scenario?{url.split('?', 1)[1]}&tp=1")
    assert scenario.status_code == 200
    model = scenario.json()["model"]
    assert (model["layers"], model["hidden"], model["tied_embeddings"]) == (28, 3072, True)
    assert scenario.json()["compute"]["params_total"] == 3_212_752_896


def test_a_refused_key_is_a_422_whose_loc_names_it(client):
    res = client.post(ROUTE, json={**LLAMA32_3B, "num_hidden_layers": "28"})
    assert res.status_code == 422
    (issue,) = res.json()["detail"]
    assert issue["loc"] == ["body", "num_hidden_layers"]
    assert "positive integer" in issue["msg"]


def test_moe_without_its_top_k_is_refused_by_that_key(client):
    # Mixture of experts is imported (issue 27), but the router's top-k must be in the config.
    cfg = {**LLAMA32_3B, "architectures": ["MixtralForCausalLM"], "num_local_experts": 8}
    res = client.post(ROUTE, json=cfg)
    assert res.status_code == 422
    assert res.json()["detail"][0]["loc"] == ["body", "num_experts_per_tok"]


def test_moe_config_sets_the_experts_fields(client):
    cfg = {**LLAMA32_3B, "architectures": ["MixtralForCausalLM"], "num_local_experts": 8,
           "num_experts_per_tok": 2}  # fmt: skip
    res = client.post(ROUTE, json=cfg)
    assert res.status_code == 200
    query = res.json()["query"]
    assert (query["experts"], query["top_k"], query["expert_ffn"]) == (8, 2, 8192)


def test_an_unknown_architecture_lists_the_supported(client):
    res = client.post(ROUTE, json={**LLAMA32_3B, "architectures": ["BertModel"]})
    assert res.status_code == 422
    (issue,) = res.json()["detail"]
    assert issue["loc"] == ["body", "architectures"]
    assert "LlamaForCausalLM" in issue["msg"] and "BloomForCausalLM" in issue["msg"]


def test_not_json_and_not_an_object_are_422_against_the_body(client):
    for raw in (b"{not json", b"[1, 2]", b"", b"\xff\xfe\x00"):
        res = client.post(ROUTE, content=raw, headers={"content-type": "application/json"})
        assert res.status_code == 422, raw
        assert res.json()["detail"][0]["loc"] == ["body"]


def test_deep_nesting_is_a_422_not_a_500(client):
    raw = b"[" * 100_000 + b"]" * 100_000
    assert len(raw) < MAX_BODY_BYTES
    res = client.post(ROUTE, content=raw)
    assert res.status_code == 422
    assert "nested" in res.json()["detail"][0]["msg"]


def test_an_oversize_body_is_413_before_it_is_parsed(client):
    padding = "x" * MAX_BODY_BYTES
    res = client.post(ROUTE, content=json.dumps({**LLAMA32_3B, "_notes": padding}))
    assert res.status_code == 413
    assert res.json()["detail"][0]["loc"] == ["body"]


def test_an_oversize_body_without_a_length_is_413_too(client):
    # Chunked: no content-length to trust, so the cap is counted as the body arrives.
    def chunks():
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b" " * 1024

    res = client.post(ROUTE, content=chunks(), headers={"content-type": "application/json"})
    assert res.status_code == 413


def test_the_route_is_in_the_openapi_with_its_body(client):
    op = client.get("/openapi.json").json()["paths"][ROUTE]["post"]
    assert "application/json" in op["requestBody"]["content"]
    assert {"413"} <= set(op["responses"])


# Qwen/Qwen2.5-7B/config.json, the keys that shape the model.
QWEN25_7B = {
    "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
    "intermediate_size": 18944, "max_position_embeddings": 131072, "model_type": "qwen2",
    "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
    "tie_word_embeddings": False, "vocab_size": 152064,
}  # fmt: skip


def test_a_context_window_is_not_taken_for_the_training_length(client):
    """Qwen2.5-7B's max_position_embeddings (131,072) set seq_len, and the page ran out of
    memory at 363 GiB. The file sets the shape; the training length stays the page's."""
    body = client.post(ROUTE, json=QWEN25_7B).json()
    assert "seq_len" not in body["query"] and body["context_length"] == 131072
    page = client.get("/api/scenario?model=llama3-8b&tp=4&pp=2&dp=1")
    seq = page.json()["model"]["seq_len"]
    merged = urlsplit(body["url"]).query + f"&seq_len={seq}&tp=4&pp=2&dp=1"
    view = client.get(f"/api/scenario?{merged}").json()
    assert view["model"]["seq_len"] == seq == 8192 and view["memory"]["fits"]


def test_gpt2s_position_table_is_its_length(client):
    gpt2 = {"architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_head": 12, "n_layer": 12,
            "n_positions": 1024, "vocab_size": 50257, "model_type": "gpt2"}  # fmt: skip
    body = client.post(ROUTE, json=gpt2).json()
    assert body["query"]["seq_len"] == 1024 and body["from_config"]["seq_len"] == "n_positions"
