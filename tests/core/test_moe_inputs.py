"""Mixture-of-experts inputs (issue 27): ModelSpec's experts fields, the Scenario's query
fields and their 422 rules, the presets, and the Hugging Face import of MoE config.json."""

from __future__ import annotations

import pytest

from app.core.inputs.hf_config import from_hf_config
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import check_model, model_of

# mistralai/Mixtral-8x7B-v0.1/config.json (the keys the import reads; Apache-2.0 model card).
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "num_attention_heads": 32, "num_experts_per_tok": 2,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "tie_word_embeddings": False, "vocab_size": 32000,
}  # fmt: skip
# Qwen/Qwen1.5-MoE-A2.7B/config.json: 60 experts of 1,408, top 4, one 5,632-wide shared MLP.
QWEN15_MOE = {
    "architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632,
    "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
    "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "num_attention_heads": 16, "num_key_value_heads": 16,
    "num_hidden_layers": 24, "vocab_size": 151936, "max_position_embeddings": 8192,
    "tie_word_embeddings": False,
}  # fmt: skip


def test_a_dense_model_has_no_moe_layers():
    assert MODELS["llama3-8b"].experts == 0 and MODELS["llama3-8b"].moe_layers == 0


def test_moe_layers_follow_the_dense_prefix_and_the_step():
    m = model_of(Scenario(layers=12, hidden=256, heads=4, experts=8, top_k=2))
    assert m.moe_layers == 12
    m2 = model_of(Scenario(layers=12, hidden=256, heads=4, experts=8, top_k=2, moe_every=2,
                           first_dense_layers=3))  # fmt: skip
    assert m2.moe_layers == sum(1 for k in range(3, 12) if (k + 1) % 2 == 0) == 5  # 3, 5, 7, 9, 11


def test_mixtral_preset_matches_its_config_import():
    preset = MODELS["mixtral-8x7b"]
    fields = from_hf_config(MIXTRAL_8X7B)
    for name, value in fields.items():
        assert getattr(preset, name) == value, name
    assert (preset.experts, preset.top_k, preset.moe_width) == (8, 2, 14336)


def test_qwen_moe_shared_expert_becomes_whole_experts():
    fields = from_hf_config(QWEN15_MOE)
    assert fields["experts"] == 60 and fields["top_k"] == 4
    assert fields["expert_ffn"] == 1408 and fields["shared_experts"] == 4
    assert fields["first_dense_layers"] == 0 and fields["moe_every"] == 1


@pytest.mark.parametrize(
    ("query", "field", "key"),
    [
        (dict(experts=8, top_k=9), "top_k", "scenario.top_k_experts"),
        (dict(experts=8), "top_k", "scenario.top_k_experts"),
        (dict(experts=8, top_k=2, ep=3, dp=3), "ep", "scenario.ep_experts"),
        (dict(experts=8, top_k=2, expert_ffn=1001), "tp", "scenario.expert_ffn_tp"),
        (dict(experts=8, top_k=2, first_dense_layers=12), "first_dense_layers",
         "scenario.moe_layers"),
        (dict(experts=8, top_k=2, routing_imbalance=4.5), "routing_imbalance",
         "scenario.routing_imbalance"),
    ],
)  # fmt: skip
def test_bad_moe_input_names_the_field_and_rule(query, field, key):
    s = Scenario(**({"layers": 12, "hidden": 256, "heads": 4, "dp": 2, "tp": 2, "pp": 2} | query))
    with pytest.raises(ScenarioError) as err:
        check_model(s, model_of(s))
    assert (err.value.field, err.value.key) == (field, key)


def test_good_moe_input_passes():
    s = Scenario(model="mixtral-8x7b", dp=4, tp=2, pp=1, ep=4, routing_imbalance=4.0)
    check_model(s, model_of(s))


def test_moe_error_keys_are_in_both_catalogues():
    import json
    from pathlib import Path

    for lang in ("en", "zh"):
        cat = json.loads(Path(f"app/i18n/locales/{lang}.json").read_text(encoding="utf-8"))
        flat = json.dumps(cat, ensure_ascii=False)
        for k in ("top_k_experts", "ep_experts", "expert_ffn_tp", "moe_layers",
                  "routing_imbalance"):  # fmt: skip
            assert f'"err.scenario.{k}"' in flat, (lang, k)
