"""A Hugging Face MoE config.json's experts -> the Scenario's experts fields (Mixtral,
Qwen2-MoE, Qwen3-MoE and DeepSeek key names, transformers configuration_<family>.py)."""

from __future__ import annotations

from app.core.inputs.hf_reader import Config, Fields, HFConfigError, _Reader, _show

# Keys whose value says how many experts an MoE layer routes among (Mixtral, Qwen MoE,
# DeepSeek); one expert, or none, is a dense model.
MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def moe_fields(r: _Reader, cfg: Config) -> Fields:
    """The experts fields of an MoE config; {} for a dense one (one expert, or none)."""
    key = r.key(*MOE_KEYS)
    if key is None or cfg[key] in (0, 1):
        return {}
    experts = r.count("experts", *MOE_KEYS)
    # Mixtral's experts are intermediate_size wide; Qwen MoE and DeepSeek name theirs.
    width = r.count("expert_ffn", "moe_intermediate_size", "intermediate_size")
    out: Fields = {
        "experts": experts,
        "top_k": r.count("top_k", "num_experts_per_tok"),
        "expert_ffn": width,
        # Qwen2-MoE decoder_sparse_step (MoE when (l + 1) % step == 0); DeepSeek's
        # moe_layer_freq counts from first_k_dense_replace instead, the same at 1.
        "moe_every": r.count("moe_every", "decoder_sparse_step", "moe_layer_freq", default=1),
        "first_dense_layers": _first_dense(r, cfg),
    }
    shared = _shared(r, cfg, width)
    if shared:
        out["shared_experts"] = shared
    return out


def _first_dense(r: _Reader, cfg: Config) -> int:
    """DeepSeek's first_k_dense_replace, or Qwen's mlp_only_layers when it is 0..k-1."""
    dense = cfg.get("mlp_only_layers") or []
    if dense:
        if not isinstance(dense, list) or dense != list(range(len(dense))):
            raise HFConfigError(
                "mlp_only_layers", "only a dense prefix 0..k-1 of layers is modelled"
            )
        r.source["first_dense_layers"] = "mlp_only_layers"
        return len(dense)
    if cfg.get("first_k_dense_replace") in (None, 0):
        return 0
    return r.count("first_dense_layers", "first_k_dense_replace")


def _shared(r: _Reader, cfg: Config, width: int) -> int:
    """Shared experts of the routed width: DeepSeek's n_shared_experts, or Qwen2-MoE's
    shared_expert_intermediate_size in units of moe_intermediate_size (5,632 = 4 x 1,408)."""
    if cfg.get("n_shared_experts"):
        return r.count("shared_experts", "n_shared_experts")
    size = cfg.get("shared_expert_intermediate_size")
    if not size:
        return 0
    if not isinstance(size, int) or isinstance(size, bool) or size % width:
        raise HFConfigError(
            "shared_expert_intermediate_size",
            f"must be a whole number of {width}-wide experts, got {_show(size)}",
        )
    r.source["shared_experts"] = "shared_expert_intermediate_size"
    return size // width
