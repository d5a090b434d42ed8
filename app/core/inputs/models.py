"""Model shapes: ModelSpec and the named presets. Frozen specs; the dict is a constant.

ModelSpec is a decoder: head_dim = hidden / heads, one MLP per layer, or (experts > 0) a
mixture of experts in the MoE layers; attention is multi-head (grouped-query with kv_heads)
or multi-head latent (DeepSeek's MLA, kv_lora_rank > 0). What a preset's real architecture
has beyond that is named beside it as a known small parameter difference; Qwen3-32B is left
out, its attention being 64 x 128 = 8192 wide on h = 5120. The MoE presets are in
moe_models.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class ModelSpec:
    name: str
    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    ffn_hidden: int
    gated_mlp: bool = False  # SwiGLU: three h x ffn matrices instead of two
    kv_heads: int | None = None  # grouped-query attention; None = heads
    tied_embeddings: bool = True  # GPT/Megatron tie the output head to the embedding
    learned_positions: bool = True  # GPT-style position table (s x h); RoPE models have none
    # Mixture of experts (Shazeer et al. 2017; Fedus et al. 2022): 0 = dense. A MoE layer's
    # MLP is ``experts`` routed experts of width ``expert_ffn`` (0: ffn_hidden), ``top_k`` of
    # them per token, plus ``shared_experts`` always-on experts of the same width (DeepSeekMoE,
    # Dai et al. 2024 §3.2). Layer l (from 0) is MoE when l >= first_dense_layers and
    # (l + 1) % moe_every == 0 (Hugging Face Qwen2-MoE decoder_sparse_step; DeepSeek-V3
    # first_k_dense_replace); the other layers keep the dense ffn_hidden MLP.
    experts: int = 0
    top_k: int = 0
    expert_ffn: int = 0
    shared_experts: int = 0
    moe_every: int = 1
    first_dense_layers: int = 0
    # Expert-parallel degree the model is held at (cost.shapes.as_held): each rank keeps
    # experts / expert_shards of every MoE layer's experts. 1 = the whole model.
    expert_shards: int = 1
    # Attention head width when it is not hidden / heads (Qwen3's head_dim 128 on h = 2048 and
    # 4096 in its MoE models); 0: hidden / heads.
    head_dim: int = 0
    # The busiest expert's tokens over the mean, as the held model runs (Scenario's knob).
    routing_imbalance: float = 1.0
    # Multi-head latent attention (DeepSeek-V2 report §2.1, eqs. 9-19): K and V come up from a
    # kv_lora_rank-wide latent, Q from a q_lora_rank-wide one (0: a full-rank Q); each head's
    # query and key are head_dim + rope_head_dim wide (the decoupled RoPE part, one shared key
    # part), its value v_head_dim wide. 0: ordinary multi-head or grouped-query attention.
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def qk_dim(self) -> int:
        """Q's width, and each head's K as attention reads it (MLA: nope + rope parts)."""
        return self.heads * (self.head_size + self.rope_head_dim) if self.mla else self.q_dim

    @property
    def k_dim(self) -> int:
        """K's width per token as attention reads it: kv_dim, or MLA's up-projected keys."""
        return self.qk_dim if self.mla else self.kv_dim

    @property
    def v_dim(self) -> int:
        """V's width per token as attention reads it."""
        return self.heads * self.v_head_dim if self.mla else self.kv_dim

    @property
    def o_dim(self) -> int:
        """The attention output's width: the output projection's input."""
        return self.heads * self.v_head_dim if self.mla else self.q_dim

    @property
    def kv_dim(self) -> int:
        if self.head_dim:
            return self.head_dim * (self.kv_heads or self.heads)
        return self.hidden * (self.kv_heads or self.heads) // self.heads

    @property
    def q_dim(self) -> int:
        """The attention's width: Q's columns, the output projection's input."""
        return self.head_dim * self.heads if self.head_dim else self.hidden

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def moe_width(self) -> int:
        """One expert's ffn width."""
        return self.expert_ffn or self.ffn_hidden

    @property
    def moe_layers(self) -> int:
        """How many layers carry experts (the rule in the class comment)."""
        if not self.experts:
            return 0
        # Layers l in [first_dense_layers, layers) with (l + 1) % moe_every == 0: the multiples
        # of moe_every in (first_dense_layers, layers], counted in closed form (the cost model
        # asks this of every layer kind it prices, thousands of times per plan).
        every = self.moe_every
        return max(0, self.layers // every - self.first_dense_layers // every)


def _gpt(name: str, layers: int, hidden: int, heads: int, seq: int = 2048) -> ModelSpec:
    # Megatron GPT: vocab 51,200, seq 2,048, ffn 4h (Narayanan et al. 2021 §5.1, Table 1).
    return ModelSpec(name, layers, hidden, heads, seq, 51_200, 4 * hidden)


def _rope_swiglu(
    name: str, shape: tuple[int, int, int, int, int], vocab: int, seq: int, tied: bool = False
) -> ModelSpec:
    """A Llama-style decoder: RoPE (no position table), SwiGLU, RMSNorm, GQA.

    ``shape`` is (layers, hidden, heads, kv_heads, ffn) as config.json names them:
    num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,
    intermediate_size."""
    layers, hidden, heads, kv_heads, ffn = shape
    return ModelSpec(
        name, layers, hidden, heads, seq, vocab, ffn, gated_mlp=True, kv_heads=kv_heads,
        tied_embeddings=tied, learned_positions=False,
    )  # fmt: skip


def _llama(
    name: str, layers: int, hidden: int, heads: int, ffn: int, tied: bool = False
) -> ModelSpec:
    # Llama 3 (Dubey et al. 2024 Table 3): GQA with 8 KV heads, SwiGLU, vocab 128,256, RoPE.
    # seq 8,192: pre-training's context (§3.4.1), rope_scaling.original_max_position_embeddings
    # in every Llama 3.1/3.2 config.json; the 131,072 there is the long-context extension.
    return _rope_swiglu(name, (layers, hidden, heads, 8, ffn), 128_256, 8192, tied)


def _qwen25(name: str, shape: tuple[int, int, int, int, int], tied: bool = False) -> ModelSpec:
    # Qwen/Qwen2.5-*/config.json: vocab 152,064 from 7B up, 151,936 below (those tie).
    # seq 4,096: pre-training's context before the final 32K stage (Qwen2.5 report §3.3).
    # Not expressed: the QKV bias, (h + 2 kv_dim) per layer, under 0.02% of the count.
    return _rope_swiglu(name, shape, 151_936 if tied else 152_064, 4096, tied)


def _qwen3(name: str, shape: tuple[int, int, int, int, int]) -> ModelSpec:
    # Qwen/Qwen3-*/config.json: vocab 151,936, head_dim 128, untied from 8B up. seq 4,096:
    # stages S1 and S2 of pre-training (Qwen3 report §3.2). Not expressed: q_norm and k_norm,
    # 2 x 128 weights per layer.
    return _rope_swiglu(name, shape, 151_936, 4096)


def _opt(name: str, layers: int, hidden: int, heads: int) -> ModelSpec:
    # Zhang et al. 2022 Table 1 (layers, heads, d_model); facebook/opt-*/config.json: vocab
    # 50,272, max_position_embeddings 2,048, ffn_dim 4h, ReLU, learned positions, tied head.
    # Not expressed: the position table's 2 offset rows (2h).
    return ModelSpec(name, layers, hidden, heads, 2048, 50_272, 4 * hidden)


def _bloom(name: str, layers: int, hidden: int, heads: int) -> ModelSpec:
    # bigscience/bloom*/config.json: vocab 250,880, 4h GELU MLP, tied head; ALiBi, so no
    # position table; seq 2,048 (the bigscience/bloom model card, Technical Specifications).
    # Not expressed: the embedding LayerNorm (2h).
    return ModelSpec(name, layers, hidden, heads, 2048, 250_880, 4 * hidden,
                     learned_positions=False)  # fmt: skip


MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType(
    {
        "tiny": ModelSpec("tiny", 8, 128, 4, 128, 512, 512),
        # Brown et al. 2020 Table 2.1 (n_layers, d_model, n_heads), in Megatron's padding of
        # the GPT-2 BPE vocabulary (50,257 -> 51,200).
        "gpt3-125m": _gpt("gpt3-125m", 12, 768, 12),
        "gpt3-350m": _gpt("gpt3-350m", 24, 1024, 16),
        "gpt3-760m": _gpt("gpt3-760m", 24, 1536, 16),
        # Table 2.1's XL row prints 24 heads of 128 on d_model 2,048, which cannot split;
        # d_model (and so n_params) kept, heads = 2,048 / 128 = 16.
        "gpt3-1.3b": _gpt("gpt3-1.3b", 24, 2048, 16),
        "gpt3-2.7b": _gpt("gpt3-2.7b", 32, 2560, 32),
        "gpt3-6.7b": _gpt("gpt3-6.7b", 32, 4096, 32),
        # Table 2.1 prints d_model 5,140, which 40 heads of 128 cannot make: 40 x 128 = 5,120.
        "gpt3-13b": _gpt("gpt3-13b", 40, 5120, 40),
        "gpt3-175b": _gpt("gpt3-175b", 96, 12288, 96),
        # Llama 3.1 (meta-llama/Llama-3.1-*/config.json, the same shapes as Llama 3's).
        "llama3-8b": _llama("llama3-8b", 32, 4096, 32, 14336),
        "llama3-70b": _llama("llama3-70b", 80, 8192, 64, 28672),
        "llama3-405b": _llama("llama3-405b", 126, 16384, 128, 53248),
        # meta-llama/Llama-3.2-1B and -3B/config.json: tie_word_embeddings true.
        "llama3.2-1b": _llama("llama3.2-1b", 16, 2048, 32, 8192, tied=True),
        "llama3.2-3b": _llama("llama3.2-3b", 28, 3072, 24, 8192, tied=True),
        # Qwen/Qwen2.5-*/config.json (layers, hidden, heads, kv_heads, intermediate_size).
        "qwen2.5-0.5b": _qwen25("qwen2.5-0.5b", (24, 896, 14, 2, 4864), tied=True),
        "qwen2.5-1.5b": _qwen25("qwen2.5-1.5b", (28, 1536, 12, 2, 8960), tied=True),
        "qwen2.5-3b": _qwen25("qwen2.5-3b", (36, 2048, 16, 2, 11008), tied=True),
        "qwen2.5-7b": _qwen25("qwen2.5-7b", (28, 3584, 28, 4, 18944)),
        "qwen2.5-14b": _qwen25("qwen2.5-14b", (48, 5120, 40, 8, 13824)),
        "qwen2.5-32b": _qwen25("qwen2.5-32b", (64, 5120, 40, 8, 27648)),
        "qwen2.5-72b": _qwen25("qwen2.5-72b", (80, 8192, 64, 8, 29568)),
        # Qwen/Qwen3-8B and -14B/config.json (40 x 128 = 5,120: expressible, unlike 32B's).
        "qwen3-8b": _qwen3("qwen3-8b", (36, 4096, 32, 8, 12288)),
        "qwen3-14b": _qwen3("qwen3-14b", (40, 5120, 40, 8, 17408)),
        # Jiang et al. 2023 Table 1 and mistralai/Mistral-7B-v0.1/config.json: vocab 32,000,
        # context 8,192 (the 4,096 sliding window does not change the weights).
        "mistral-7b": _rope_swiglu("mistral-7b", (32, 4096, 32, 8, 14336), 32_000, 8192),
        # Zhang et al. 2022 Table 1.
        "opt-1.3b": _opt("opt-1.3b", 24, 2048, 32),
        "opt-6.7b": _opt("opt-6.7b", 32, 4096, 32),
        "opt-13b": _opt("opt-13b", 40, 5120, 40),
        "opt-30b": _opt("opt-30b", 48, 7168, 56),
        "opt-66b": _opt("opt-66b", 64, 9216, 72),
        "opt-175b": _opt("opt-175b", 96, 12288, 96),
        # bigscience/bloom-7b1 and bigscience/bloom/config.json (n_layer, hidden_size, n_head).
        "bloom-7b1": _bloom("bloom-7b1", 30, 4096, 32),
        "bloom-176b": _bloom("bloom-176b", 70, 14336, 112),
        # EleutherAI/pythia-6.9b/config.json: GPT-NeoX, rotary, 4h GELU MLP with biases,
        # untied head, vocab 50,432, seq 2,048.
        "pythia-6.9b": ModelSpec(
            "pythia-6.9b",
            32,
            4096,
            32,
            2048,
            50_432,
            16384,
            tied_embeddings=False,
            learned_positions=False,
        ),  # fmt: skip
        # Narayanan et al. 2021 Table 1 (layers, hidden, heads).
        "megatron-1.7b": _gpt("megatron-1.7b", 24, 2304, 24),
        "megatron-3.6b": _gpt("megatron-3.6b", 30, 3072, 32),
        "megatron-7.5b": _gpt("megatron-7.5b", 36, 4096, 32),
        "megatron-18b": _gpt("megatron-18b", 40, 6144, 48),
        # Korthikanti et al. 2022 Table 3: the 22B model (48 layers, h 6144, 64 heads).
        "megatron-22b": _gpt("megatron-22b", 48, 6144, 64),
        "megatron-39b": _gpt("megatron-39b", 48, 8192, 64),
        "megatron-76b": _gpt("megatron-76b", 60, 10240, 80),
        "megatron-145b": _gpt("megatron-145b", 80, 12288, 96),
        "megatron-310b": _gpt("megatron-310b", 96, 16384, 128),
        "megatron-530b": _gpt("megatron-530b", 105, 20480, 128),
        "megatron-1t": _gpt("megatron-1t", 128, 25600, 160),
    }
)
