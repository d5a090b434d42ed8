"""The mixture-of-experts presets: ModelSpec with experts (app.core.inputs.models).

Left out, and why: Qwen3-30B-A3B and Qwen3-235B-A22B (Qwen/Qwen3-*-A*B/config.json: head_dim
128 with 32 and 64 heads, attention 4096 and 8192 wide on h = 2048 and 4096, which ModelSpec's
head_dim = hidden / heads cannot express, as for Qwen3-32B); DeepSeek-V3 (MLA attention)."""

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


MOE_MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType(
    {
        # (num_hidden_layers, hidden_size, num_attention_heads, intermediate_size)
        "mixtral-8x7b": _mixtral("mixtral-8x7b", 32, 4096, 32, 14336),
        "mixtral-8x22b": _mixtral("mixtral-8x22b", 56, 6144, 48, 16384),
    }
)
