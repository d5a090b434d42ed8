"""The GEMMs one TP rank runs for one layer and one micro-batch, and the default layer split
for callers that name no schedule (the placement itself is schedules.pipeline's). Notation of
Narayanan et al. 2021: b micro-batch, s sequence, h hidden, a heads, t = tp, V vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.schedules.pipeline import default_split, even_layers


def rank_seq(m: ModelSpec, t: Training) -> int:
    """The sequence positions one context-parallel rank holds: s/cp (Megatron-LM
    get_batch_on_this_cp_rank: 2*cp chunks, two per rank; Liu et al. 2023, Ring Attention §3).
    Its queries see every key, so attention's second s stays whole."""
    return m.seq_len // t.cp


def rank_tokens(m: ModelSpec, t: Training) -> int:
    """Tokens of one micro-batch on one rank: b x s/cp."""
    return t.micro_batch_size * rank_seq(m, t)


@dataclass(frozen=True)
class Gemm:
    """One (m x k) @ (k x n) product, run ``count`` times: as ``count`` kernels, or as one
    batched kernel (``batched``) whose size is all of them together."""

    m: int
    n: int
    k: int
    count: int = 1
    batched: bool = False

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.count


def padded_vocab(vocab: int, tp: int, multiple: int) -> int:
    """The vocabulary as the embedding and output layer hold it: padded to a multiple of
    ``multiple`` x tp so every TP rank gets an equal, aligned slice (Megatron-LM
    training/tokenizer/tokenizer.py _vocab_size_with_padding, --make-vocab-size-divisible-by
    128 by default); multiple = 1 leaves it as it is (torchtitan, Hugging Face)."""
    step = multiple * tp
    return -(-vocab // step) * step


def as_held(m: ModelSpec, tp: int, multiple: int, ep: int = 1, imbalance: float = 1.0) -> ModelSpec:
    """The model as its ranks hold and run it: with the padded vocabulary, and for a mixture
    of experts each rank's experts/ep experts and the busiest expert's share."""
    held = replace(m, vocab=padded_vocab(m.vocab, tp, multiple))
    if not m.experts:
        return held
    return replace(held, expert_shards=ep, routing_imbalance=imbalance)


def layer_mix(m: ModelSpec) -> tuple[tuple[float, ModelSpec], ...]:
    """(share of the layers, the model as that layer) for each kind of layer: a dense model's
    one kind; a mixture of experts' dense layers (the ffn_hidden MLP) and MoE layers. Per-layer
    costs are weighted by these shares (exact when every layer is MoE, as Mixtral)."""
    if not m.experts:
        return ((1.0, m),)
    moe = m.moe_layers / m.layers
    dense = replace(m, experts=0)
    return tuple((w, k) for w, k in ((1.0 - moe, dense), (moe, m)) if w > 0)


def busiest_share(m: ModelSpec) -> float:
    """The busiest EP rank's routed tokens over the mean: its experts/ep local experts with
    the busiest expert at ``routing_imbalance`` x the mean and the others at the mean."""
    local = m.experts // m.expert_shards
    return (local - 1 + m.routing_imbalance) / local


def layer_gemms(m: ModelSpec, tokens: int, tp: int, etp: int | None = None) -> list[Gemm]:
    """Forward GEMMs of one layer on one TP rank (Shoeybi et al. 2019 §3: Q, K, V and the MLP's
    first matrices column-parallel, the attention output and MLP output row-parallel); for a
    MoE model (experts > 0), one of its MoE layers (moe_gemms), its experts split over etp
    (None: tp)."""
    h, f = m.hidden, m.ffn_hidden
    up = 2 if m.gated_mlp else 1  # SwiGLU's gate and up projections (Shazeer 2020 eq. 6)
    attention = mla_gemms(m, tokens, tp) if m.mla else [
        Gemm(tokens, (m.q_dim + 2 * m.kv_dim) // tp, h),  # fused QKV
        Gemm(tokens, h, m.q_dim // tp),  # attention output projection
    ]  # fmt: skip
    if m.experts:
        return attention + moe_gemms(m, tokens, tp, etp or tp)
    return attention + [
        Gemm(tokens, f // tp, h, count=up),
        Gemm(tokens, h, f // tp),  # MLP down projection
    ]


def mla_gemms(m: ModelSpec, tokens: int, tp: int) -> list[Gemm]:
    """Multi-head latent attention's projections on one TP rank (DeepSeek-V2 report eqs. 9-13
    and 37-38; Megatron-core multi_latent_attention.py): the down projections to the Q and KV
    latents (the latter with the shared RoPE key) on every TP rank, the up projections
    column-parallel, the output projection row-parallel."""
    h, heads = m.hidden, m.heads
    if m.q_lora_rank:
        q = [Gemm(tokens, m.q_lora_rank, h), Gemm(tokens, m.qk_dim // tp, m.q_lora_rank)]
    else:
        q = [Gemm(tokens, m.qk_dim // tp, h)]
    return q + [
        Gemm(tokens, m.kv_lora_rank + m.rope_head_dim, h),
        Gemm(tokens, heads * (m.head_size + m.v_head_dim) // tp, m.kv_lora_rank),
        Gemm(tokens, h, m.o_dim // tp),
    ]


def moe_gemms(m: ModelSpec, tokens: int, tp: int, etp: int | None = None) -> list[Gemm]:
    """A MoE layer's MLP GEMMs on one rank of the busiest EP rank's group (Megatron-LM
    moe_layer.py): the router (h x experts, replicated over TP), the shared experts as one
    dense MLP, and the rank's experts/ep local experts as one grouped GEMM each (Megatron
    experts.py GroupedMLP: every local expert's rows in one batched kernel). Each rank receives
    tokens x top_k routed rows on average (Lepikhin et al. 2021, GShard §2.2), the busiest
    busiest_share() times that; expert tensor parallelism splits each expert's width by etp
    (default tp). With etp other than tp (MoE parallel folding, Liu et al. 2025 §3), each
    dense TP rank routes its own tokens/tp (sequence parallel) and the expert-TP all-gather
    (token_dispatcher.py MoEAlltoAllTokenDispatcher.dispatch_postprocess) brings etp of
    those shards together: rows x etp/tp, width / etp, the same FLOPs per rank."""
    h, w = m.hidden, m.moe_width
    etp = etp or tp
    up = 2 if m.gated_mlp else 1
    local = m.experts // m.expert_shards
    rows = tokens * m.top_k * busiest_share(m) / local * etp / tp  # per local expert
    out = [Gemm(tokens, m.experts, h)]  # router logits (Fedus et al. 2022 eq. 1)
    if m.shared_experts:  # DeepSeekMoE (Dai et al. 2024 §3.2): always-on, as a dense MLP
        sw = m.shared_experts * w
        out += [Gemm(tokens, sw // tp, h, count=up), Gemm(tokens, h, sw // tp)]
    return out + [
        Gemm(rows, w // etp, h, count=local * up, batched=True),  # type: ignore[arg-type]
        Gemm(rows, h, w // etp, count=local, batched=True),  # type: ignore[arg-type]
    ]


def logits_gemm(m: ModelSpec, tokens: int, tp: int) -> Gemm:
    return Gemm(tokens, m.vocab // tp, m.hidden)  # Narayanan et al. 2021 eq. 3: 2bshV


def attention_flops(m: ModelSpec, tokens: int, tp: int) -> float:
    # Narayanan et al. 2021 eq. 3: QK^T and attention x V, 4bs^2h over the layer's heads;
    # 2bs^2 times Q's width plus 2bs^2 times V's where they differ (MLA's 192 and 128).
    return 2.0 * tokens * m.seq_len * (m.qk_dim + m.o_dim) / tp


def even_chunk_layers(m: ModelSpec, pp: int, chunks: int) -> list[list[int]]:
    """The default split placed interleaved-style: what callers that name no schedule get
    (the planner; any v = 1 schedule). pipeline.even_layers with the model's layer count."""
    return even_layers(m.layers, pp, chunks)


def layers_per_chunk(m: ModelSpec, pp: int, chunks: int, stage: int) -> int:
    """Layers in the first chunk of ``stage`` under the default split: every chunk's count
    when the split is even or there is one chunk per rank."""
    return default_split(m.layers, pp * chunks)[stage]


def param_tensors(m: ModelSpec, layers: int, first: bool, last: bool) -> int:
    """Parameter tensors of a rank with ``layers`` layers, plus the embedding (``first``) and
    the head (``last``): what a one-tensor-at-a-time optimizer steps through.
    Per layer, as gpu_probe/model.py's Block and Hugging Face's LlamaDecoderLayer hold them:
    two norms (LayerNorm weight and bias; RMSNorm weight only), q, k, v and o, and the MLP's
    two matrices (three gated)."""
    norm = 1 if m.gated_mlp else 2
    per_layer = 2 * norm + 4 + (3 if m.gated_mlp else 2)
    embed = 2 if m.learned_positions else 1
    head = norm + (0 if m.tied_embeddings else 1)
    return layers * per_layer + (embed if first else 0) + (head if last else 0)
