"""The mixture-of-experts presets: ModelSpec with experts (app.core.inputs.models).

Left out, and why: DeepSeek-V3 (MLA attention shapes are not modelled)."""

from __future__ import annotations

from types import MappingProxyType

from app.core.inputs.models import ModelSpec


def _mixtral(name: str, layers: int, hidden: int, heads: int, ffn: int) -> ModelSpec:
    # mistralai/Mixtral-8x7B-v0.1 and -8x22B-v0.1/config.json: MixtralForCausalLM, 8 SwiGLU
    # experts of intermediate_size (num_local_experts 8, num_experts_per_tok 2) in every layer,
    # 8 KV heads, vocab 32,000, RoPE, untied head. seq 4,096: Megatron-LM
    # examples/mixtral/train_mixtral_8x7b_distributed.sh (--seq-length 4096); the config's
    # max_position_embeddings is the inference context.
    return ModelSpec(
        name, layers, hidden, heads, 4096, 32_000, ffn, gated_mlp=True, kv_heads=8,
        tied_embeddings=False, learned_positions=False, experts=8, top_k=2, expert_ffn=ffn,
    )  # fmt: skip


def _qwen3_moe(name: str, shape: tuple[int, int, int, int, int]) -> ModelSpec:
    # Qwen/Qwen3-30B-A3B and -235B-A22B/config.json: Qwen3MoeForCausalLM, num_experts 128,
    # num_experts_per_tok 8, decoder_sparse_step 1 and mlp_only_layers [] (every layer MoE),
    # num_key_value_heads 4, head_dim 128 (attention wider than hidden), vocab 151,936,
    # untied head. seq 4,096 as the dense Qwen3 presets (Qwen3 report §3.2). Not expressed:
    # q_norm and k_norm (2 x 128 weights per layer).
    layers, hidden, heads, dense_ffn, expert_ffn = shape
    return ModelSpec(
        name, layers, hidden, heads, 4096, 151_936, dense_ffn, gated_mlp=True, kv_heads=4,
        tied_embeddings=False, learned_positions=False, experts=128, top_k=8,
        expert_ffn=expert_ffn, head_dim=128,
    )  # fmt: skip


MOE_MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType(
    {
        # (num_hidden_layers, hidden_size, num_attention_heads, intermediate_size)
        "mixtral-8x7b": _mixtral("mixtral-8x7b", 32, 4096, 32, 14336),
        "mixtral-8x22b": _mixtral("mixtral-8x22b", 56, 6144, 48, 16384),
        # (num_hidden_layers, hidden_size, num_attention_heads, intermediate_size,
        # moe_intermediate_size)
        "qwen3-30b-a3b": _qwen3_moe("qwen3-30b-a3b", (48, 2048, 32, 6144, 768)),
        "qwen3-235b-a22b": _qwen3_moe("qwen3-235b-a22b", (94, 4096, 64, 12288, 1536)),
    }
)
