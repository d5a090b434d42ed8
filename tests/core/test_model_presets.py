"""Open-model presets: each one's parameter count lands on its published size."""

import pytest

from app.core.cost import memory
from app.core.inputs.models import MODELS

PUBLISHED_B = {  # billions, as the source prints them
    # Brown et al. 2020 Table 2.1, n_params.
    "gpt3-125m": 0.125, "gpt3-350m": 0.350, "gpt3-760m": 0.760, "gpt3-1.3b": 1.3,
    "gpt3-2.7b": 2.7, "gpt3-6.7b": 6.7, "gpt3-13b": 13.0, "gpt3-175b": 175.0,
    # meta-llama Llama 3.1 model card ("8B", "70B", "405B"); Llama 3.2 model card, Model
    # Information: "1B (1.23B)", "3B (3.21B)".
    "llama3-8b": 8.0, "llama3-70b": 70.0, "llama3-405b": 405.0,
    "llama3.2-1b": 1.23, "llama3.2-3b": 3.21,
    # Qwen/Qwen2.5-* and Qwen/Qwen3-* model cards, "Number of Parameters".
    "qwen2.5-0.5b": 0.49, "qwen2.5-1.5b": 1.54, "qwen2.5-3b": 3.09, "qwen2.5-7b": 7.61,
    "qwen2.5-14b": 14.7, "qwen2.5-32b": 32.5, "qwen2.5-72b": 72.7,
    "qwen3-8b": 8.2, "qwen3-14b": 14.8,
    # Mistral AI, "Announcing Mistral 7B" (2023): "a 7.3B parameter model".
    "mistral-7b": 7.3,
    # Zhang et al. 2022 Table 1.
    "opt-1.3b": 1.3, "opt-6.7b": 6.7, "opt-13b": 13.0, "opt-30b": 30.0, "opt-66b": 66.0,
    "opt-175b": 175.0,
    # bigscience/bloom-7b1 and bigscience/bloom model cards; EleutherAI/pythia-6.9b's.
    "bloom-7b1": 7.069016064, "bloom-176b": 176.247271424, "pythia-6.9b": 6.857302016,
    # Korthikanti et al. 2022 Table 3 (the other Megatron rows are test_costs.py's).
    "megatron-22b": 22.0,
}  # fmt: skip


@pytest.mark.parametrize("name,billions", PUBLISHED_B.items())
def test_each_preset_lands_within_3_percent_of_its_published_size(name, billions):
    assert memory.total_params(MODELS[name]) / 1e9 == pytest.approx(billions, rel=0.03)


def test_every_preset_has_a_published_size_here_or_in_test_costs():
    # Narayanan et al. 2021 Table 1's rows are checked in test_costs.py.
    unchecked = [k for k in MODELS if k not in PUBLISHED_B and not k.startswith("megatron-")]
    assert unchecked == ["tiny"]


@pytest.mark.parametrize(
    "name,card",  # the exact counts the model cards print
    [("bloom-7b1", 7_069_016_064), ("bloom-176b", 176_247_271_424)],
)
def test_bloom_is_exact_but_for_its_embedding_layernorm(name, card):
    m = MODELS[name]
    # BLOOM normalises the word embeddings (weight and bias, 2h): ModelSpec has no such norm.
    assert memory.total_params(m) + 2 * m.hidden == card


def test_pythia_is_exact():
    # EleutherAI/pythia-6.9b model card: 6,857,302,016 total, 6,444,163,072 non-embedding.
    m = MODELS["pythia-6.9b"]
    assert memory.total_params(m) == 6_857_302_016
    assert memory.total_params(m) - 2 * m.vocab * m.hidden == 6_444_163_072


def test_every_preset_key_is_its_name():
    assert [m.name for m in MODELS.values()] == list(MODELS)


@pytest.mark.parametrize(
    "name,tied,learned,gated",
    [
        ("llama3-8b", False, False, True), ("llama3.2-1b", True, False, True),
        ("qwen2.5-3b", True, False, True), ("qwen2.5-7b", False, False, True),
        ("qwen3-8b", False, False, True), ("mistral-7b", False, False, True),
        ("gpt3-1.3b", True, True, False), ("opt-13b", True, True, False),
        ("bloom-176b", True, False, False), ("pythia-6.9b", False, False, False),
    ],
)  # fmt: skip
def test_embedding_position_and_mlp_kinds(name, tied, learned, gated):
    m = MODELS[name]
    assert (m.tied_embeddings, m.learned_positions, m.gated_mlp) == (tied, learned, gated)


def test_every_preset_splits_into_heads_and_kv_groups():
    for m in MODELS.values():
        assert m.hidden % m.heads == 0, m.name
        assert m.heads % (m.kv_heads or m.heads) == 0, m.name
