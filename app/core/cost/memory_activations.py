"""Activation memory: what one layer keeps from its forward for its backward, per
architecture (GeLU or SwiGLU MLP, MHA or GQA, flash or explicit attention), with or without
sequence parallelism, under each recompute mode; and what a recomputed layer rebuilds.

Korthikanti et al. 2022 §4.1 count the bytes of each tensor a GPT layer stores: 16-bit
activations, 1-byte dropout masks, sbh(34 + 5as/h) in all (Table 2). The same count, tensor
by tensor, for any ffn width f and KV width k (= h·kv_heads/heads), gives per token:
  kept whole on every TP rank (split by t only under SP): the two norms' inputs 4h, the
    attention's and the MLP's inputs (the norms' outputs) 2h + 2h, dropout masks h + h;
  split by t: Q 2h, K and V 2k + 2k, the output projection's input 2h, the MLP's
    intermediates (GeLU: its input and output, 2f + 2f; SwiGLU: gate, up, SiLU(gate) and
    their product, 4 x 2f), and without flash attention the softmax output 2as (Korthikanti
    §4.1; with dropout also its 1-byte mask and its 2-byte output, 5as in all).
GPT (f = 4h, k = h): 10h whole + 24h split = 34h, Table 2. Llama-family models train without
dropout (the Llama reference model.py has none), GPT/BERT-style ones with it (Megatron-LM
--hidden-dropout/--attention-dropout 0.1): models with a gated MLP count no masks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from itertools import accumulate, groupby
from operator import itemgetter
from typing import NamedTuple

from app.core.cost.shapes import busiest_share
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training


class LayerBytes(NamedTuple):
    """One layer's no-recompute activations, bytes per token at 16 bits, by how TP splits them."""

    whole: float  # on every TP rank (divided by t only under sequence parallelism)
    split: float  # divided by t
    scores: float  # explicit attention's s x s terms (split by t); 0 with flash attention
    layer_input: float  # the layer's input, 2h: what full recompute keeps


def layer_bytes(m: ModelSpec, t: Training) -> LayerBytes:
    """The per-token terms of the module docstring for one layer of ``m``."""
    h, f, a, s = m.hidden, m.ffn_hidden, m.heads, m.seq_len
    dropout = t.has_dropout(m.gated_mlp)
    masks = 2.0 * h if dropout else 0.0  # Korthikanti §4.1: the two sbh dropout masks
    wide = 2.0 if t.autocast else 1.0  # autocast: fp32 norms and softmax (Training.autocast)
    # Per norm: its 16-bit input (2h, 4h under autocast); an eager upcasting RMSNorm keeps the
    # fp32 copy and the 16-bit normalized output instead, 4h + 2h (Training.eager_rmsnorm).
    norm = 6.0 if t.eager_rmsnorm else 2.0 * wide
    whole = 2.0 * norm * h + 4.0 * h + masks  # norm inputs; attention and MLP inputs
    mlp = _mlp(m, t, f) if not m.experts else _moe_mlp(m, t)
    # Q, K and V, the output projection's input, the MLP (q_dim and kv_dim unless MLA)
    split = 2.0 * m.qk_dim + 2.0 * (m.k_dim + m.v_dim) + 2.0 * m.o_dim + mlp
    if m.mla:  # the latents (Megatron-core multi_latent_attention.py), on every TP rank:
        # the Q latent and its norm's output, the KV latent with the RoPE key, and its norm's
        whole += 4.0 * m.q_lora_rank + 2.0 * (m.kv_lora_rank + m.rope_head_dim)
        whole += 2.0 * m.kv_lora_rank
    # Korthikanti §4.1: softmax output 2as, its dropout mask as and output 2as (5as with
    # dropout); Dao et al. 2022 §3.1: flash attention stores none of them.
    # Under autocast the softmax output and the dropout's output are fp32: 4as + as + 4as.
    softmax = (2.0 * wide) * (2.0 if dropout else 1.0) + (1.0 if dropout else 0.0)
    scores = 0.0 if t.flash_attention else softmax * a * s
    return LayerBytes(whole, split, scores, 2.0 * h)


def _mlp(m: ModelSpec, t: Training, f: float) -> float:
    """GeLU: its input and output (4f); SwiGLU eager: gate, up, SiLU(gate), product (8f);
    fused (Megatron-core SwiGLUFunction saves its input): gate and up, product (6f)."""
    return (6.0 if t.fused_swiglu else 8.0) * f if m.gated_mlp else 4.0 * f


def _moe_mlp(m: ModelSpec, t: Training) -> float:
    """A mixture of experts' MLP bytes per token, the mean over its dense and MoE layers. A
    MoE layer keeps each token top_k times (Megatron-LM token_dispatcher.py: the permuted
    tokens, 2h each, and every expert's MLP activations), on the busiest EP rank
    busiest_share() times that, plus the shared experts' MLP and the router's 16-bit logits
    and fp32 probabilities (6 x experts)."""
    routed = m.top_k * busiest_share(m) * (_mlp(m, t, m.moe_width) + 2.0 * m.hidden)
    shared = _mlp(m, t, m.shared_experts * m.moe_width)
    moe = routed + shared + 6.0 * m.experts
    share = m.moe_layers / m.layers
    return (1.0 - share) * _mlp(m, t, m.ffn_hidden) + share * moe


def _op_sac_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """torchtitan's per-op SAC (parallelize_llama.py _save_list, "Saves output of all compute
    ops, except every second mm"), per token: the layer's input, the outputs of the 1st, 3rd,
    5th and 7th matmul (wq, wv, w1, w2; a GeLU MLP's 5th is fc1 and its 6th is recomputed) and
    the attention's output; under TP the row-parallel w2 output is a whole-h partial sum, and
    under SP both reduce-scatters' outputs are kept too."""
    h, f = m.hidden, m.ffn_hidden
    sp = t.sequence_parallel and tp > 1
    kept = 2.0 * h / (tp if sp else 1)  # the checkpointed layer's input
    kept += (2.0 * m.qk_dim + 2.0 * m.v_dim + 2.0 * m.o_dim + 2.0 * f) / tp  # wq, wv, out, w1
    if m.gated_mlp:
        kept += 2.0 * h  # w2's output: whole h (under TP, the partial sums before the reduce)
    if sp and t.sac_saves_reduce_scatter:
        kept += 4.0 * h / tp  # the two reduce-scatter outputs
    return kept


def _per_token(m: ModelSpec, t: Training, tp: int, mode: str | None = None) -> float:
    """Bytes per token (16-bit) one layer keeps from F to B under recompute ``mode``
    (default: t's own)."""
    mode = mode or t.recompute
    lb = layer_bytes(m, t)
    whole_div = tp if t.sequence_parallel else 1
    if mode == "full":
        return lb.layer_input / whole_div  # Table 2: 2sbh (input only), /t under SP
    whole = lb.whole / whole_div + (lb.split + lb.scores) / tp
    if mode == "selective" and t.selective_ac == "op":
        # Never above keeping everything: under TP the model's no-recompute count is
        # Megatron's (inputs kept sharded), which torchtitan's whole w2 output can exceed.
        return min(_op_sac_bytes(m, t, tp), whole)
    if mode == "selective":  # §4.2: selective drops the scores
        return lb.whole / whole_div + lb.split / tp
    return whole


def _scale(m: ModelSpec, t: Training) -> float:
    """Tokens of one micro-batch on one rank, times 2 for fp32 activations."""
    # Context parallelism: "the activation memory footprint per GPU is also smaller by the CP
    # degree" (Megatron-LM docs/user-guide/features/context_parallel.md): Korthikanti et al.
    # 2022 Table 2 with s -> s/cp.
    return m.seq_len / t.cp * t.micro_batch_size * (2.0 if t.dtype == "fp32" else 1.0)


def activation_bytes_per_layer(m: ModelSpec, t: Training, tp: int) -> float:
    """Bytes one layer keeps for its backward, one micro-batch. GPT (f = 4h, k = h, dropout):
    Korthikanti et al. 2022 Table 2 exactly: sbh(10 + 24/t + 5as/(ht)), sbh/t (34 + 5as/h)
    with SP, the 5as/h dropped by selective recompute and flash attention, 2sbh under full."""
    return _per_token(m, t, tp) * _scale(m, t)


def recompute_bytes_per_layer(m: ModelSpec, t: Training, tp: int) -> float:
    """What the backward rebuilds of one recomputed layer while it runs that layer's
    backward: the layer's no-recompute activations less what it kept (Chen et al. 2016 §3:
    checkpointing holds one segment's activations at a time during the backward)."""
    if t.recompute == "none" or t.forward_only:
        return 0.0
    rebuilt = _per_token(m, t, tp, "none") - _per_token(m, t, tp)
    return max(rebuilt, 0.0) * _scale(m, t)


def chunk_activation_bytes(m: ModelSpec, t: Training, tp: int, n: int) -> float:
    """activation_bytes_per_layer, averaged over an ``n``-layer chunk of which only
    t.recomputed(n) are fully recomputed (Megatron --recompute-method block: the first
    --recompute-num-layers keep only their input, Korthikanti et al. 2022 Table 2's 2sbh; the
    others keep all of theirs, the no-recompute row)."""
    if t.recompute != "full" or t.recompute_layers is None or n == 0:
        return activation_bytes_per_layer(m, t, tp)
    k = t.recomputed(n)
    kept = _per_token(m, t, tp, "none") * _scale(m, t)
    return (k * activation_bytes_per_layer(m, t, tp) + (n - k) * kept) / n


# Qi et al. 2024 (arXiv 2401.10241) Table 1, per layer: B needs M_B = sb(34h + 5as) of the
# activations, W needs M_W = 32sbh of them (each linear layer's input and output gradient).
W_OF_B = 32.0 / 34.0


def w_pass_share(m: ModelSpec, t: Training, tp: int) -> float:
    """Bytes one layer keeps from its B until its W, over the bytes it keeps from F to B
    (activation_bytes_per_layer). Table 1's M_W / M_B of the layer's activations without the
    attention scores (W reads no softmax or dropout output) and without recompute (B has
    rebuilt them by then), so above 1 under full recompute."""
    whole = activation_bytes_per_layer(m, replace(t, recompute="none", flash_attention=True), tp)
    return W_OF_B * whole / activation_bytes_per_layer(m, t, tp)


def held_frontier(events: Iterable, layers: list[list[int]]) -> list[list[tuple[int, int]]]:
    """Per rank, the (F-to-B, B-to-W) layer-micro-batches it holds after each action of a
    split-backward schedule (events with stage, kind, chunk, each rank's in order), only the
    pairs no other pair beats in both: the peak for any W share is one of them."""
    held = [(0, 0)] * len(layers)
    states: list[list[tuple[int, int]]] = [[(0, 0)] for _ in layers]
    # One stage's run of events at a time, its two running sums in C (accumulate): F keeps
    # its layers until its B, whose activations then serve the W only until the W.
    for stage, run in groupby(events, itemgetter(0)):  # Event: (stage, kind, mb, chunk, ...)
        n = layers[stage]
        moves = [(e[1], n[e[3]]) for e in run]
        f = accumulate((x if k == "F" else -x if k == "B" else 0 for k, x in moves),
                       initial=held[stage][0])  # fmt: skip
        w = accumulate((x if k == "B" else -x if k == "W" else 0 for k, x in moves),
                       initial=held[stage][1])  # fmt: skip
        states[stage] += zip(f, w, strict=True)
        held[stage] = states[stage][-1]
    return [_pareto(row) for row in states]


def _pareto(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for f, w in sorted(set(pairs), reverse=True):
        if not out or w > out[-1][1]:
            out.append((f, w))
    return out
