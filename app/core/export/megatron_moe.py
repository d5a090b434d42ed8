"""Megatron-LM flags for what lies beyond a dense GPT: a mixture of experts, multi-head latent
attention and context parallelism's exchange (megatron/training/arguments.py, each flag by
its name there)."""

from __future__ import annotations

from itertools import groupby

from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario

Flag = tuple[str, object]


def layer_pattern(m: ModelSpec) -> list[int]:
    """1 for each MoE layer, 0 for each dense one (ModelSpec's rule: l >= first_dense_layers
    and (l + 1) % moe_every == 0)."""
    return [
        int(layer >= m.first_dense_layers and (layer + 1) % m.moe_every == 0)
        for layer in range(m.layers)
    ]


def layer_freq(m: ModelSpec) -> object:
    """--moe-layer-freq: 1 when every layer has experts, else its Python list expression,
    run-length encoded as Megatron's examples write it ("[0]*3+[1]*58")."""
    pattern = layer_pattern(m)
    if all(pattern):
        return 1
    return "+".join(f"[{v}]*{len(list(run))}" for v, run in groupby(pattern))


def moe_flags(m: ModelSpec, s: Scenario) -> list[Flag]:
    """A mixture of experts as the cost model prices it: the experts, top-k routing, the
    expert-parallel size, grouped GEMMs and the all-to-all token dispatcher."""
    if not m.experts:
        return []
    out: list[Flag] = [
        ("--num-experts", m.experts),
        ("--moe-router-topk", m.top_k),
        ("--moe-ffn-hidden-size", m.moe_width),
    ]
    if m.shared_experts:
        out.append(("--moe-shared-expert-intermediate-size", m.shared_experts * m.moe_width))
    out.append(("--moe-layer-freq", layer_freq(m)))
    if s.ep > 1:
        out.append(("--expert-model-parallel-size", s.ep))
    if s.etp is not None and s.etp != s.tp:  # arguments.py: default tensor_model_parallel_size
        out.append(("--expert-tensor-parallel-size", s.etp))
    # moe_layer.py: one grouped GEMM over a rank's local experts; token_dispatcher.py:
    # MoEAlltoAllTokenDispatcher, the dispatch and combine cost/comm.py prices.
    return out + [("--moe-grouped-gemm", None), ("--moe-token-dispatcher-type", "alltoall")]


def mla_flags(m: ModelSpec) -> list[Flag]:
    """Multi-head latent attention's ranks and head widths."""
    if not m.mla:
        return []
    out: list[Flag] = [("--multi-latent-attention", None)]
    if m.q_lora_rank:
        out.append(("--q-lora-rank", m.q_lora_rank))
    return out + [
        ("--kv-lora-rank", m.kv_lora_rank),
        ("--qk-head-dim", m.head_size),
        ("--qk-pos-emb-head-dim", m.rope_head_dim),
        ("--v-head-dim", m.v_head_dim),
    ]


def cp_flags(s: Scenario) -> list[Flag]:
    if s.cp == 1:
        return []
    out: list[Flag] = [("--context-parallel-size", s.cp)]
    if s.cp_comm != "p2p":  # arguments.py's default; the others by the same names
        out.append(("--cp-comm-type", s.cp_comm))
    return out
