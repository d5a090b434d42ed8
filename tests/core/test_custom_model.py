"""A model given by its shape is that shape: no preset's SwiGLU, GQA or FFN leaks into it."""

import pytest

from app.core.cost import memory
from app.core.inputs.presets import MODELS
from app.core.inputs.scenario import Scenario, ScenarioError
from app.core.inputs.specs import check_model, model_of


def test_shape_without_a_model_is_a_megatron_gpt_not_the_default_llama():
    m = model_of(Scenario(layers=4, hidden=256, heads=4))
    assert m.name == "custom"
    assert (m.ffn_hidden, m.kv_heads, m.gated_mlp) == (4 * 256, None, False)
    assert (m.vocab, m.seq_len, m.tied_embeddings, m.learned_positions) == (
        51_200,
        2048,
        True,
        True,
    )
    # Narayanan et al. 2021 §5.1: 12h^2 + 13h per layer, plus (V + s) h embeddings.
    h = 256
    assert memory.total_params(m) == 4 * (12 * h * h + 13 * h) + (51_200 + 2048) * h + 2 * h


def test_every_model_field_is_settable_and_a_full_llama_shape_matches_the_preset():
    llama = MODELS["llama3-8b"]
    shape = dict(
        layers=llama.layers, hidden=llama.hidden, heads=llama.heads, kv_heads=llama.kv_heads,
        seq_len=llama.seq_len, vocab=llama.vocab, ffn_hidden=llama.ffn_hidden, gated_mlp=True,
        tied_embeddings=False, learned_positions=False,
    )  # fmt: skip
    m = model_of(Scenario(**shape))
    assert m.name == "custom"
    assert memory.total_params(m) == memory.total_params(llama)


def test_an_explicit_preset_is_still_edited_in_place():
    m = model_of(Scenario(model="llama3-8b", layers=16))
    assert (m.layers, m.gated_mlp, m.kv_heads, m.ffn_hidden) == (16, True, 8, 14336)


@pytest.mark.parametrize("missing", ["layers", "hidden", "heads"])
def test_a_custom_model_names_the_shape_field_it_lacks(missing):
    given = {k: v for k, v in dict(layers=4, hidden=256, heads=4).items() if k != missing}
    with pytest.raises(ScenarioError) as e:
        model_of(Scenario(model="custom", **given))
    assert e.value.field == missing


def test_kv_heads_must_divide_heads():
    s = Scenario(layers=4, hidden=256, heads=4, kv_heads=3, tp=1)
    with pytest.raises(ScenarioError) as e:
        check_model(s, model_of(s))
    assert e.value.field == "kv_heads"
