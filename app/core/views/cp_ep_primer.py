"""The primer's context- and expert-parallel section for one rank: which slice of the
sequence each rank of its CP ring holds and what the ring passes, which experts each rank of
its EP group holds and what the all-to-alls move. Every number comes from app.core.cost, the
same functions the timeline is priced with."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.cost import comm, compute, memory
from app.core.cost.durations import cp_ring_s
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout


def causal_chunks(cp: int) -> list[list[int]]:
    """The two of 2·cp sequence chunks each CP position holds: i and 2·cp − 1 − i, so every
    rank gets an equal share of the causal mask's work (Megatron-LM utils.py
    get_batch_on_this_cp_rank; TransformerEngine's load-balanced context parallelism)."""
    return [[i, 2 * cp - 1 - i] for i in range(cp)]


def cp_json(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, rank: int) -> dict:
    """The CP ring of ``rank``: its members, their chunks, the K/V block each ring step passes
    and the part of it attention does not hide (durations.cp_ring_s), and the activation
    memory per layer against cp = 1 (memory.activation_bytes_per_layer)."""
    cp, tp = layout.cp, layout.tp
    ranks = layout.group("cp", rank)
    attn_f, attn_b = compute.attention_seconds(m, hw, t, tp)
    ring_f, ring_b = cp_ring_s(m, hw, t, layout, attn_f, attn_b)
    alone = replace(t, cp=1)
    return {
        "size": cp,
        "ranks": ranks,
        "position": ranks.index(rank),
        "seq_len": m.seq_len,
        "tokens_per_rank": m.seq_len // cp,
        "chunks": causal_chunks(cp),
        "comm": t.cp_comm,  # p2p: the ring; allgather or a2a: one collective, exposed
        "ring_steps": cp - 1,
        "kv_bytes_per_step": comm.cp_kv_bytes(m, t, tp) if cp > 1 else 0.0,
        "crosses_node": comm.placement(layout, "cp", hw.domain_size).domains > 1,
        "attention_s": {"forward": attn_f, "backward": attn_b},
        "exposed_s": {"forward": ring_f, "backward": ring_b},
        "activation_bytes": {
            "cp1": memory.activation_bytes_per_layer(m, alone, tp),
            "now": memory.activation_bytes_per_layer(m, t, tp),
        },
    }


def ep_json(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, rank: int
) -> dict[str, Any] | None:
    """The EP group of ``rank`` on a mixture of experts (None for a dense model): which
    experts each member holds (Megatron-LM moe_layer.py: num_local_experts = experts / ep,
    contiguous), and one MoE layer's dispatch and combine in one pass (comm.moe_a2a_*)."""
    if not m.experts:
        return None
    ep = layout.ep
    ranks = layout.group("ep", rank)
    local = m.experts // ep
    split = comm.moe_source_split(t, layout.tp)
    return {
        "size": ep,
        "ranks": ranks,
        "position": ranks.index(rank),
        "experts": m.experts,
        "top_k": m.top_k,
        "shared_experts": m.shared_experts,
        "moe_layers": m.moe_layers,
        "experts_per_rank": local,
        "expert_ids": [[i * local, (i + 1) * local - 1] for i in range(ep)],
        # Each TP rank dispatches its own sequence-parallel shard (comm.moe_source_split).
        "a2a_buffer_bytes": comm.moe_a2a_buffer_bytes(m, t, split),
        "a2a_sent_bytes": comm.moe_a2a_sent_bytes(m, t, ep, split),
        "a2a_s": comm.moe_a2a_s(m, hw, t, layout),
        "crosses_node": ep > 1 and comm.placement(layout, "ep", hw.domain_size).domains > 1,
    }


def cp_ep_json(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, rank: int) -> dict:
    return {"cp": cp_json(m, hw, t, layout, rank), "ep": ep_json(m, hw, t, layout, rank)}
