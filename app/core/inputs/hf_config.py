"""A Hugging Face config.json -> the Scenario's model-shape query fields. Pure; no I/O.

Each supported architecture names its shape with its own keys (transformers'
``configuration_<family>.py``); this maps them onto the fields of
``app.core.inputs.scenario.ARCH_FIELDS``. The training length (seq_len) is not in a
config.json: ``max_position_embeddings`` is the longest context the model serves (131,072 for
Llama 3.1, pre-trained at 8,192), so it is set only where it is the size of a learned position
table (GPT-2, OPT), and otherwise reported as ``context_length`` for the page to cap its own
seq_len with. Mixture-of-experts keys (Mixtral, Qwen2-MoE, Qwen3-MoE) become the experts
fields (``_moe``). Anything ModelSpec cannot express is refused with the config key that
shows it (an attention wider than hidden, as Qwen3-MoE's head_dim 128; OPT-350M's projected
embeddings; MoE layers that are not a dense prefix plus every Nth), so an import is never
silently a different model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from app.core.inputs.hf_moe import moe_fields
from app.core.inputs.hf_reader import Config, Fields, HFConfigError, _Reader, _show
from app.core.inputs.scenario import ARCH_FIELDS, CUSTOM_MODEL, MOE_FIELDS, Scenario

# BLOOM trained at 2,048 (bigscience/bloom model card, Technical Specifications); ALiBi has
# no position table, so its config.json need not say.
BLOOM_SEQ = 2048


def _llama_like(r: _Reader) -> Fields:
    # LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config. Their MLP is always gated
    # (down(act(gate(x)) * up(x))): hidden_act (silu) picks the function, not the shape.
    heads = r.count("heads", "num_attention_heads")
    return {
        "layers": r.count("layers", "num_hidden_layers"),
        "hidden": r.count("hidden", "hidden_size"),
        "heads": heads,
        # Absent in Llama 2 era configs: then every head has its own K and V.
        "kv_heads": r.count("kv_heads", "num_key_value_heads", default=heads),
        "ffn_hidden": r.count("ffn_hidden", "intermediate_size"),
        "vocab": r.count("vocab", "vocab_size"),
        # Llama 1 conversions spell it max_sequence_length.
        "seq_len": r.count("seq_len", "max_position_embeddings", "max_sequence_length"),
        "gated_mlp": True,
        "tied_embeddings": r.flag("tied_embeddings", "tie_word_embeddings", False),
        "learned_positions": False,  # RoPE
    }


def _gpt2(r: _Reader) -> Fields:
    # GPT2Config: n_inner null means 4 x n_embd; wte is tied to the LM head by default.
    hidden = r.count("hidden", "n_embd")
    return {
        "layers": r.count("layers", "n_layer"),
        "hidden": hidden,
        "heads": r.count("heads", "n_head"),
        "ffn_hidden": r.count("ffn_hidden", "n_inner", default=4 * hidden),
        "vocab": r.count("vocab", "vocab_size"),
        "seq_len": r.count("seq_len", "n_positions", "n_ctx"),
        "gated_mlp": False,
        "tied_embeddings": r.flag("tied_embeddings", "tie_word_embeddings", True),
        "learned_positions": True,
    }


def _opt(r: _Reader) -> Fields:
    hidden = r.count("hidden", "hidden_size")
    # OPT-350M embeds at 512 and projects in and out of 1,024: not one embedding of h.
    proj = r.count("word_embed_proj_dim", "word_embed_proj_dim", default=hidden)
    if proj != hidden:
        raise HFConfigError(
            "word_embed_proj_dim",
            f"differs from hidden_size ({proj} != {hidden}): projected embeddings are not modelled",
        )
    return {
        "layers": r.count("layers", "num_hidden_layers"),
        "hidden": hidden,
        "heads": r.count("heads", "num_attention_heads"),
        "ffn_hidden": r.count("ffn_hidden", "ffn_dim"),
        "vocab": r.count("vocab", "vocab_size"),
        "seq_len": r.count("seq_len", "max_position_embeddings"),
        "gated_mlp": False,  # ReLU, two matrices
        "tied_embeddings": r.flag("tied_embeddings", "tie_word_embeddings", True),
        "learned_positions": True,
    }


def _bloom(r: _Reader) -> Fields:
    # BloomConfig takes n_embed for hidden_size and num_attention_heads for n_head; its MLP
    # is 4h (BloomMLP has no width setting).
    hidden = r.count("hidden", "hidden_size", "n_embed")
    return {
        "layers": r.count("layers", "n_layer", "num_hidden_layers"),
        "hidden": hidden,
        "heads": r.count("heads", "n_head", "num_attention_heads"),
        "ffn_hidden": 4 * hidden,
        "vocab": r.count("vocab", "vocab_size"),
        "seq_len": r.count("seq_len", "seq_length", default=BLOOM_SEQ),
        "gated_mlp": False,
        "tied_embeddings": r.flag("tied_embeddings", "tie_word_embeddings", True),
        "learned_positions": False,  # ALiBi
    }


def _gpt_neox(r: _Reader) -> Fields:
    # GPTNeoXConfig: rotary on part of each head, no position table; embed_out is untied.
    return {
        "layers": r.count("layers", "num_hidden_layers"),
        "hidden": r.count("hidden", "hidden_size"),
        "heads": r.count("heads", "num_attention_heads"),
        "ffn_hidden": r.count("ffn_hidden", "intermediate_size"),
        "vocab": r.count("vocab", "vocab_size"),
        "seq_len": r.count("seq_len", "max_position_embeddings"),
        "gated_mlp": False,
        "tied_embeddings": r.flag("tied_embeddings", "tie_word_embeddings", False),
        "learned_positions": False,
    }


Mapper = Callable[[_Reader], Fields]
ARCHITECTURES: Mapping[str, Mapper] = {
    "LlamaForCausalLM": _llama_like,
    "MistralForCausalLM": _llama_like,
    "Qwen2ForCausalLM": _llama_like,
    "Qwen3ForCausalLM": _llama_like,
    # transformers configuration_mixtral.py, configuration_qwen2_moe.py, _qwen3_moe.py: the
    # Llama-like keys plus the experts' (read by _moe).
    "MixtralForCausalLM": _llama_like,
    "Qwen2MoeForCausalLM": _llama_like,
    "Qwen3MoeForCausalLM": _llama_like,
    "GPT2LMHeadModel": _gpt2,
    "OPTForCausalLM": _opt,
    "BloomForCausalLM": _bloom,
    "GPTNeoXForCausalLM": _gpt_neox,
}
# A config without "architectures" still names its model_type.
MODEL_TYPES: Mapping[str, str] = {
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "gpt2": "GPT2LMHeadModel",
    "opt": "OPTForCausalLM",
    "bloom": "BloomForCausalLM",
    "gpt_neox": "GPTNeoXForCausalLM",
}


# Architectures the core prices only as a preset: their attention has no query fields.
PRESET_ONLY = {
    name: f"{name}'s multi-head latent attention is priced as the deepseek-v3 preset "
    "(model=deepseek-v3); its ranks are not query fields, so the config cannot be imported"
    for name in ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")
}


def architecture(cfg: Config) -> str:
    """The supported architecture a config names, else a refusal listing the supported."""
    names = cfg.get("architectures")
    supported = ", ".join(ARCHITECTURES)
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise HFConfigError("architectures", "must be a list of class names")
        known = [n for n in names if n in ARCHITECTURES]
        if not known and any(n in PRESET_ONLY for n in names):
            raise HFConfigError(
                "architectures", PRESET_ONLY[next(n for n in names if n in PRESET_ONLY)]
            )
        if not known:
            shown = ", ".join(names)[:80] or "none"
            raise HFConfigError(
                "architectures", f"{shown} is not supported; supported: {supported}"
            )
        return known[0]
    model_type = cfg.get("model_type")
    if isinstance(model_type, str) and model_type in MODEL_TYPES:
        return MODEL_TYPES[model_type]
    raise HFConfigError("architectures", f"is missing; supported: {supported}")


def _check_shape(fields: Fields, r: _Reader, cfg: Config) -> None:
    """What the core's TP split needs of any model, against the config's own keys."""
    hidden, heads, kv = fields["hidden"], fields["heads"], fields["kv_heads"]
    if hidden % heads:
        raise HFConfigError(
            r.source["heads"], f"must divide hidden size {hidden} evenly, got {heads}"
        )
    if kv > heads or heads % kv:
        raise HFConfigError(
            r.source.get("kv_heads", r.source["heads"]),
            f"must divide the {heads} attention heads evenly, got {kv}",
        )
    # Qwen3-32B: 64 heads of 128 on h = 5,120. ModelSpec's attention is h wide.
    head_dim = cfg.get("head_dim")
    if head_dim is not None and head_dim != hidden // heads:
        raise HFConfigError(
            "head_dim",
            f"{_show(head_dim)} x {heads} heads is not the hidden size {hidden}: attention "
            "wider or narrower than hidden is not modelled",
        )


def _check_bounds(fields: Fields, r: _Reader) -> None:
    """The Scenario's own limits, reported against the config key the value came from."""
    try:
        Scenario.model_validate({"model": CUSTOM_MODEL, **fields})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err.get("loc") else "model"
        raise HFConfigError(r.source.get(field, field), str(err["msg"])) from None


@dataclass(frozen=True)
class Imported:
    """What a config.json says: the query fields it sets, the config key each came from,
    and the longest context it serves (a ceiling on seq_len, not the training length)."""

    fields: dict[str, object]
    keys: dict[str, str]
    context_length: int


def imported(cfg: Config) -> Imported:
    if not isinstance(cfg, Mapping):
        raise HFConfigError("config", "must be a JSON object")
    reader = _Reader(cfg)
    fields = ARCHITECTURES[architecture(cfg)](reader) | moe_fields(reader, cfg)
    fields.setdefault("kv_heads", fields["heads"])
    context = fields["seq_len"]
    if not fields["learned_positions"]:  # no position table: the length is the page's
        del fields["seq_len"]
    _check_shape(fields, reader, cfg)
    _check_bounds(fields, reader)
    ordered = {f: fields[f] for f in ARCH_FIELDS + MOE_FIELDS if f in fields}
    keys = {f: reader.source.get(f, "architectures") for f in ordered}  # implied by it
    return Imported(ordered, keys, int(context))


def from_hf_config(cfg: Config) -> dict[str, object]:
    """The Scenario query fields the config sets (``ARCH_FIELDS``; seq_len only with a
    learned position table)."""
    return imported(cfg).fields
