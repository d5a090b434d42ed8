"""A Hugging Face config.json -> the Scenario's model-shape query fields. Pure; no I/O.

Each supported architecture names its shape with its own keys (transformers'
``configuration_<family>.py``); this maps them onto the fields of
``app.core.inputs.scenario.ARCH_FIELDS``. The training length (seq_len) is not in a
config.json: ``max_position_embeddings`` is the longest context the model serves (131,072 for
Llama 3.1, pre-trained at 8,192), so it is set only where it is the size of a learned position
table (GPT-2, OPT), and otherwise reported as ``context_length`` for the page to cap its own
seq_len with. Anything ModelSpec cannot express is refused with the
config key that shows it (mixture-of-experts, an attention wider than hidden, OPT-350M's
projected embeddings), so an import is never silently a different model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.core.inputs.scenario import ARCH_FIELDS, CUSTOM_MODEL, Scenario

Config = Mapping[str, Any]
Fields = dict[str, int | bool]  # Scenario field -> value, as the query will carry it
# Keys whose value says how many experts an MoE layer routes among (Mixtral, Qwen MoE,
# DeepSeek); one expert, or none, is a dense model.
MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
# BLOOM trained at 2,048 (bigscience/bloom model card, Technical Specifications); ALiBi has
# no position table, so its config.json need not say.
BLOOM_SEQ = 2048


class HFConfigError(ValueError):
    """One config.json key and why it cannot be imported."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


class _Reader:
    """Typed reads of a config, remembering which key each Scenario field came from."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.source: dict[str, str] = {}

    def key(self, *names: str) -> str | None:
        """The first of ``names`` the config has (transformers accepts aliases)."""
        return next((n for n in names if self.cfg.get(n) is not None), None)

    def count(self, field: str, *names: str, default: int | None = None) -> int:
        key = self.key(*names)
        if key is None:
            if default is None:
                raise HFConfigError(names[0], "is required and missing")
            self.source[field] = names[0]
            return default
        value = self.cfg[key]
        # bool is an int in Python, and 4096.0 is not a layer count a config would write.
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise HFConfigError(key, f"must be a positive integer, got {_show(value)}")
        self.source[field] = key
        return value

    def flag(self, field: str, name: str, default: bool) -> bool:
        value = self.cfg.get(name)
        if value is None:
            self.source[field] = name
            return default
        if not isinstance(value, bool):
            raise HFConfigError(name, f"must be true or false, got {_show(value)}")
        self.source[field] = name
        return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
    "gpt2": "GPT2LMHeadModel",
    "opt": "OPTForCausalLM",
    "bloom": "BloomForCausalLM",
    "gpt_neox": "GPTNeoXForCausalLM",
}


def architecture(cfg: Config) -> str:
    """The supported architecture a config names, else a refusal listing the supported."""
    names = cfg.get("architectures")
    supported = ", ".join(ARCHITECTURES)
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise HFConfigError("architectures", "must be a list of class names")
        known = [n for n in names if n in ARCHITECTURES]
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


def _refuse_moe(cfg: Config) -> None:
    for key in MOE_KEYS:
        value = cfg.get(key)
        if value not in (None, 0, 1):
            raise HFConfigError(key, "mixture-of-experts is not modelled (dense models only)")


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
    _refuse_moe(cfg)
    reader = _Reader(cfg)
    fields = ARCHITECTURES[architecture(cfg)](reader)
    fields.setdefault("kv_heads", fields["heads"])
    context = fields["seq_len"]
    if not fields["learned_positions"]:  # no position table: the length is the page's
        del fields["seq_len"]
    _check_shape(fields, reader, cfg)
    _check_bounds(fields, reader)
    ordered = {f: fields[f] for f in ARCH_FIELDS if f in fields}
    keys = {f: reader.source.get(f, "architectures") for f in ordered}  # implied by it
    return Imported(ordered, keys, int(context))


def from_hf_config(cfg: Config) -> dict[str, object]:
    """The Scenario query fields the config sets (``ARCH_FIELDS``; seq_len only with a
    learned position table)."""
    return imported(cfg).fields
