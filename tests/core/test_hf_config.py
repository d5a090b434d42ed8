"""config.json -> scenario fields: real configs land on their presets; refusals name the key."""

import copy

import pytest

from app.core.cost import memory
from app.core.inputs.hf_config import HFConfigError, from_hf_config, imported
from app.core.inputs.models import MODELS, ModelSpec
from app.core.inputs.scenario import ARCH_FIELDS, Scenario

# Each config.json below is the hub file's architecture keys (and a few others it carries,
# which the import must ignore), from the repository named beside it.
LLAMA31_8B = {  # meta-llama/Llama-3.1-8B
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 128000,
    "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072,
    "mlp_bias": False, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}  # fmt: skip
LLAMA32_1B = {  # meta-llama/Llama-3.2-1B
    **LLAMA31_8B, "head_dim": 64, "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "tie_word_embeddings": True,
}  # fmt: skip
QWEN25_7B = {  # Qwen/Qwen2.5-7B
    "architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
    "intermediate_size": 18944, "max_position_embeddings": 131072, "max_window_layers": 28,
    "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28,
    "num_key_value_heads": 4, "rope_theta": 1000000.0, "sliding_window": 131072,
    "tie_word_embeddings": False, "use_sliding_window": False, "vocab_size": 152064,
}  # fmt: skip
QWEN25_05B = {  # Qwen/Qwen2.5-0.5B
    **QWEN25_7B, "hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768,
    "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
    "tie_word_embeddings": True, "vocab_size": 151936,
}  # fmt: skip
QWEN3_8B = {  # Qwen/Qwen3-8B
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12288,
    "max_position_embeddings": 40960, "model_type": "qwen3", "num_attention_heads": 32,
    "num_hidden_layers": 36, "num_key_value_heads": 8, "rope_scaling": None,
    "sliding_window": None, "tie_word_embeddings": False, "vocab_size": 151936,
}  # fmt: skip
MISTRAL_7B = {  # mistralai/Mistral-7B-v0.1
    "architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": False,
    "vocab_size": 32000,
}  # fmt: skip
OPT_13B = {  # facebook/opt-13b
    "_remove_final_layer_norm": False, "activation_function": "relu",
    "architectures": ["OPTForCausalLM"], "do_layer_norm_before": True, "enable_bias": True,
    "ffn_dim": 20480, "hidden_size": 5120, "max_position_embeddings": 2048,
    "model_type": "opt", "num_attention_heads": 40, "num_hidden_layers": 40,
    "vocab_size": 50272, "word_embed_proj_dim": 5120,
}  # fmt: skip
BLOOM_176B = {  # bigscience/bloom: the legacy n_embed / num_attention_heads spelling
    "apply_residual_connection_post_layernorm": False, "architectures": ["BloomForCausalLM"],
    "model_type": "bloom", "n_embed": 14336, "n_layer": 70, "num_attention_heads": 112,
    "pretraining_tp": 4, "vocab_size": 250880,
}  # fmt: skip
BLOOM_7B1 = {  # bigscience/bloom-7b1
    "architectures": ["BloomForCausalLM"], "hidden_size": 4096, "model_type": "bloom",
    "n_head": 32, "n_inner": None, "n_layer": 30, "offset_alibi": 100, "vocab_size": 250880,
}  # fmt: skip
PYTHIA_69B = {  # EleutherAI/pythia-6.9b
    "architectures": ["GPTNeoXForCausalLM"], "hidden_act": "gelu", "hidden_size": 4096,
    "intermediate_size": 16384, "max_position_embeddings": 2048, "model_type": "gpt_neox",
    "num_attention_heads": 32, "num_hidden_layers": 32, "rotary_pct": 0.25,
    "tie_word_embeddings": False, "use_parallel_residual": True, "vocab_size": 50432,
}  # fmt: skip
GPT2 = {  # openai-community/gpt2
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
    "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
    "vocab_size": 50257,
}  # fmt: skip
# GPT-3 175B written as a GPT2Config (Brown et al. 2020 use GPT-2's architecture), in
# Megatron's padded vocabulary as the preset is.
GPT3_AS_GPT2 = {
    **GPT2, "n_ctx": 2048, "n_embd": 12288, "n_head": 96, "n_layer": 96, "n_positions": 2048,
    "vocab_size": 51200,
}  # fmt: skip

MATCHES = [
    (LLAMA31_8B, "llama3-8b"), (LLAMA32_1B, "llama3.2-1b"), (QWEN25_7B, "qwen2.5-7b"),
    (QWEN25_05B, "qwen2.5-0.5b"), (QWEN3_8B, "qwen3-8b"), (MISTRAL_7B, "mistral-7b"),
    (OPT_13B, "opt-13b"), (BLOOM_176B, "bloom-176b"), (BLOOM_7B1, "bloom-7b1"),
    (PYTHIA_69B, "pythia-6.9b"), (GPT3_AS_GPT2, "gpt3-175b"),
]  # fmt: skip


def spec(fields):
    # A config.json without a position table does not say the training length.
    return ModelSpec(name="custom", **{"seq_len": 8192, **fields})


@pytest.mark.parametrize(("cfg", "preset"), MATCHES, ids=[p for _, p in MATCHES])
def test_a_real_config_reproduces_its_presets_parameter_count_exactly(cfg, preset):
    fields = from_hf_config(cfg)
    assert list(fields) == [f for f in ARCH_FIELDS if f in fields]
    assert ("seq_len" in fields) == fields["learned_positions"]
    got, want = spec(fields), MODELS[preset]
    assert memory.total_params(got) == memory.total_params(want)
    # Everything but the context: a config.json says the longest it serves (131,072 for
    # Llama 3.1), the preset the length it was pre-trained at (8,192).
    assert shape(got) == shape(want)


def shape(m):
    out = {f: getattr(m, f) for f in ARCH_FIELDS if f != "seq_len"}
    return out | {"kv_heads": m.kv_heads or m.heads}  # None in a preset means one per head


def test_llama_31_8b_maps_field_by_field():
    assert from_hf_config(LLAMA31_8B) == {
        "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
        "vocab": 128256, "ffn_hidden": 14336, "gated_mlp": True, "tied_embeddings": False,
        "learned_positions": False,
    }  # fmt: skip


def test_gpt2_small_is_its_124m_with_4h_mlp_and_its_own_context():
    fields = from_hf_config(GPT2)
    assert (fields["ffn_hidden"], fields["seq_len"], fields["tied_embeddings"]) == (
        3072,
        1024,
        True,
    )
    assert fields["learned_positions"] and not fields["gated_mlp"]
    # wte + wpe + 12 blocks + ln_f of openai-community/gpt2: 124,439,808 weights.
    assert memory.total_params(spec(fields)) == 124_439_808


def test_bloom_has_no_position_table_so_no_length_and_its_card_gives_2048():
    fields = from_hf_config(BLOOM_7B1)
    assert (fields["ffn_hidden"], fields["learned_positions"]) == (4 * 4096, False)
    assert "seq_len" not in fields and imported(BLOOM_7B1).context_length == 2048


def test_a_rope_models_context_is_reported_not_set():
    got = imported(LLAMA31_8B)
    assert "seq_len" not in got.fields and got.context_length == 131072
    assert got.keys["kv_heads"] == "num_key_value_heads"


def test_llama_2_era_config_without_kv_heads_has_one_kv_head_per_head():
    cfg = {k: v for k, v in LLAMA31_8B.items() if k != "num_key_value_heads"}
    assert from_hf_config(cfg)["kv_heads"] == 32


def test_model_type_stands_in_for_a_missing_architectures_list():
    cfg = {k: v for k, v in MISTRAL_7B.items() if k != "architectures"}
    assert from_hf_config(cfg) == from_hf_config(MISTRAL_7B)


def test_the_fields_make_a_valid_scenario_query():
    query = {"model": "custom", **from_hf_config(QWEN3_8B)}
    s = Scenario.model_validate({k: str(v).lower() for k, v in query.items()})
    assert (s.model, s.layers, s.kv_heads, s.gated_mlp) == ("custom", 36, 8, True)


def edit(cfg, **changes):
    out = copy.deepcopy(cfg)
    for k, v in changes.items():
        if v is ...:
            del out[k]
        else:
            out[k] = v
    return out


@pytest.mark.parametrize(
    ("cfg", "key", "words"),
    [
        (edit(LLAMA31_8B, architectures=["T5ForConditionalGeneration"]), "architectures",
         "LlamaForCausalLM"),
        (edit(LLAMA31_8B, architectures="LlamaForCausalLM"), "architectures", "list"),
        (edit(LLAMA31_8B, architectures=..., model_type=...), "architectures", "missing"),
        (edit(LLAMA31_8B, num_hidden_layers=...), "num_hidden_layers", "required"),
        (edit(GPT2, n_embd=...), "n_embd", "required"),
        (edit(OPT_13B, ffn_dim=...), "ffn_dim", "required"),
        (edit(LLAMA31_8B, hidden_size="4096"), "hidden_size", "positive integer"),
        (edit(LLAMA31_8B, hidden_size=4096.0), "hidden_size", "positive integer"),
        (edit(LLAMA31_8B, vocab_size=True), "vocab_size", "positive integer"),
        (edit(LLAMA31_8B, num_attention_heads=-32), "num_attention_heads", "positive integer"),
        (edit(LLAMA31_8B, intermediate_size=0), "intermediate_size", "positive integer"),
        (edit(BLOOM_176B, n_embed=float("nan")), "n_embed", "positive integer"),
        (edit(LLAMA31_8B, tie_word_embeddings="yes"), "tie_word_embeddings", "true or false"),
        # Mixture of experts (issue 27): imported, but the router's top-k must be given, and
        # only a dense prefix of layers is expressible.
        (edit(MISTRAL_7B, architectures=["MixtralForCausalLM"], num_local_experts=8),
         "num_experts_per_tok", "required"),
        (edit(QWEN25_7B, architectures=["Qwen2MoeForCausalLM"], num_experts=60,
              num_experts_per_tok=4, mlp_only_layers=[3]), "mlp_only_layers", "dense prefix"),
        # Qwen/Qwen3-32B: 64 heads of 128 on hidden 5,120.
        (edit(QWEN3_8B, hidden_size=5120, num_attention_heads=64, num_hidden_layers=64),
         "head_dim", "not modelled"),
        # facebook/opt-350m embeds at 512 and projects to 1,024.
        (edit(OPT_13B, hidden_size=1024, ffn_dim=4096, num_attention_heads=16,
              num_hidden_layers=24, word_embed_proj_dim=512), "word_embed_proj_dim",
         "not modelled"),
        # DeepSeek-V3: its MLA ranks are not query fields; the refusal points at the preset.
        (edit(LLAMA31_8B, architectures=["DeepseekV3ForCausalLM"], kv_lora_rank=512),
         "architectures", "model=deepseek-v3"),
        (edit(LLAMA31_8B, num_attention_heads=31), "num_attention_heads", "divide"),
        (edit(LLAMA31_8B, num_key_value_heads=3), "num_key_value_heads", "divide"),
        (edit(LLAMA31_8B, num_key_value_heads=64), "num_key_value_heads", "divide"),
        (edit(BLOOM_176B, num_attention_heads=100), "num_attention_heads", "divide"),
        (edit(LLAMA31_8B, num_hidden_layers=5000), "num_hidden_layers", "1024"),
        (edit(GPT2, n_positions=1 << 21, n_ctx=...), "n_positions", "less than"),
    ],
)  # fmt: skip
def test_each_refusal_names_the_config_key_and_why(cfg, key, words):
    with pytest.raises(HFConfigError) as err:
        from_hf_config(cfg)
    assert err.value.key == key
    assert words in err.value.reason


def test_a_dense_config_may_say_it_has_no_experts():
    assert from_hf_config(edit(QWEN3_8B, num_experts=0)) == from_hf_config(QWEN3_8B)
