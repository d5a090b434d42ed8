"""The mixture-of-experts presets: ModelSpec with experts (app.core.inputs.models)."""

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


def _deepseek_v3() -> ModelSpec:
    # deepseek-ai/DeepSeek-V3/config.json: DeepseekV3ForCausalLM, 61 layers, hidden 7,168,
    # 128 heads of multi-head latent attention (q_lora_rank 1,536, kv_lora_rank 512,
    # qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128); the first 3 layers
    # (first_k_dense_replace) dense with intermediate_size 18,432, the other 58 with 256
    # routed experts (n_routed_experts, num_experts_per_tok 8) of moe_intermediate_size 2,048
    # and 1 shared; vocab 129,280, untied head. seq 4,096: the report's pre-training length
    # (DeepSeek-V3 report §4.2). Not expressed: the multi-token-prediction module
    # (num_nextn_predict_layers 1, 14B parameters on top of the 671B) and node-limited routing.
    return ModelSpec(
        "deepseek-v3", 61, 7168, 128, 4096, 129_280, 18432, gated_mlp=True, kv_heads=128,
        tied_embeddings=False, learned_positions=False, experts=256, top_k=8, expert_ffn=2048,
        shared_experts=1, first_dense_layers=3, head_dim=128, kv_lora_rank=512,
        q_lora_rank=1536, rope_head_dim=64, v_head_dim=128,
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
        "deepseek-v3": _deepseek_v3(),
    }
)
