"""F, B and W of one chunk on each pipeline rank, in seconds: compute from cost.compute, the
TP collectives inside each layer, and ZeRO-3's parameter gathers where they are not hidden."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost import comm, compute
from app.core.cost.memory import stage_params
from app.core.cost.overlap import exposed_gather_s
from app.core.cost.shapes import layers_per_chunk, logits_gemm
from app.core.cost.training import Training
from app.core.hardware import HardwareSpec
from app.core.models import ModelSpec
from app.core.simulate import Durations
from app.core.topology import Layout


@dataclass(frozen=True)
class LayerCost:
    """One layer, one micro-batch, one TP rank: seconds of each pass."""

    f: float  # forward compute
    b: float  # input-gradient compute
    w: float  # weight-gradient GEMMs
    tp: float  # TP collectives in one pass (forward, or input-gradient backward)
    recompute: float  # extra forward work in the backward


def layer_cost(m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout) -> LayerCost:
    tp = layout.tp
    gemm = compute.layer_gemm_seconds(m, hw, t, tp)
    attn_f, attn_b = compute.attention_seconds(m, hw, t, tp)
    ew = compute.hbm_seconds(compute.elementwise_bytes(m, t, tp), hw)
    tp_s = 0.0
    if tp > 1:  # Shoeybi et al. 2019 §3: two all-reduces (or AG + RS) per layer and pass
        place = comm.placement(layout, "tp", hw.domain_size)
        tp_s = 2 * comm.all_reduce_s(comm.tp_message_bytes(m, t), place, hw)
    f = gemm + attn_f + ew
    if t.recompute == "full":
        extra = f + tp_s  # Chen et al. 2016: the whole forward again, collectives included
    elif t.recompute == "selective" and not t.flash_attention:
        extra = attn_f  # Korthikanti et al. 2022 §5: QK^T, softmax, dropout and AV again
    else:
        extra = 0.0  # flash attention's backward already recomputes the scores (attn_b)
    # Qi et al. 2024 §2: the backward is an input-gradient pass (B) and a weight-gradient
    # pass (W), each one GEMM per forward GEMM; elementwise backward reads and writes twice.
    return LayerCost(f=f, b=gemm + attn_b + 2 * ew, w=gemm, tp=tp_s, recompute=extra)


def _head(m: ModelSpec, hw: HardwareSpec, t: Training, tp: int) -> tuple[float, float]:
    """(forward, weight-gradient) seconds of the output layer and loss on the last stage."""
    logits = compute.gemm_seconds(
        logits_gemm(m, t.micro_batch_size * m.seq_len, tp), hw, t.element_bytes
    )
    return compute.head_seconds(m, hw, t, tp), logits


def _gather_s(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, stage: int, chunks: int, head: int
) -> float:
    """One chunk's ZeRO-3 parameter all-gather over the DP group, one collective per layer
    (FSDP wraps each transformer block as a unit: Zhao et al. 2023 §3.2)."""
    if t.zero < 3 or layout.dp == 1:
        return 0.0
    chunk_bytes = stage_params(m, stage, layout.pp, layout.tp, chunks, head) / chunks
    place = comm.placement(layout, "dp", hw.domain_size)
    layers = layers_per_chunk(m, layout.pp, chunks, stage)
    return comm.all_gather_s(chunk_bytes * t.element_bytes, place, hw, messages=max(layers, 1))


def stage_durations(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, chunks: int, head_stage: int
) -> tuple[list[Durations], float]:
    """Per-rank F/B/W per chunk, and the TP seconds inside one chunk's F (busiest rank)."""
    cost = layer_cost(m, hw, t, layout)
    crosses = comm.placement(layout, "pp", hw.domain_size).domains > 1
    message = comm.activation_message_bytes(m, t, layout.tp)
    p2p = comm.p2p_s(message, crosses, hw) if layout.pp > 1 else 0.0
    head_f, head_w = _head(m, hw, t, layout.tp)
    out, tp_max = [], 0.0
    for stage in range(layout.pp):
        n = layers_per_chunk(m, layout.pp, chunks, stage)
        tp_max = max(tp_max, n * cost.tp)
        # The head's work is spread over the rank's chunks: durations are per rank.
        hf, hw_ = (head_f / chunks, head_w / chunks) if stage == head_stage else (0.0, 0.0)
        f = n * (cost.f + cost.tp) + hf
        b = n * (cost.b + cost.tp + cost.recompute) + hf
        w = n * cost.w + hw_
        gather = _gather_s(m, hw, t, layout, stage, chunks, head_stage)
        f += exposed_gather_s(gather, f, t.overlap_param_gather)
        b += exposed_gather_s(gather, b + w, t.overlap_param_gather)
        out.append(Durations(f=f, b=b, w=w, p2p=p2p))
    return out, tp_max
