"""Communication volume, action durations and step time for one training step."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.costs import (
    DTYPE_BYTES,
    Training,
    forward_flops_logits,
    forward_flops_per_layer,
    layers_per_chunk,
)
from app.core.presets import HardwareSpec, ModelSpec
from app.core.simulate import Durations
from app.core.topology import Layout

# Sustained fraction of peak for transformer-sized bf16 GEMMs. One global constant, never
# tuned per run; our assumption, checked against published runs in docs/fidelity.md (0.52,
# Megatron's best end-to-end fraction in Narayanan et al. 2021 Table 1, fits those rows worse).
GEMM_EFFICIENCY = 0.7
P2P_LATENCY_S = 10e-6  # one NCCL send/recv hop, order of magnitude (nccl-tests latency)
COLLECTIVE_LATENCY_S = 20e-6  # small-message all-reduce on 8 GPUs, order of magnitude (nccl-tests)


def ring_factor(n: int) -> float:
    # NCCL tests PERFORMANCE.md: a ring all-reduce moves 2(n-1)/n of the buffer per rank.
    return 2.0 * (n - 1) / n if n > 1 else 0.0


@dataclass(frozen=True)
class Links:
    tp: str
    pp: str
    dp: str


def links_of(layout: Layout) -> Links:
    kind = {a: "inter" if layout.crosses_node(a) else "intra" for a in ("tp", "pp", "dp")}
    return Links(**kind)


def bandwidth_bps(hw: HardwareSpec, link: str) -> float:
    return 1e9 * (hw.inter_gbps if link == "inter" else hw.intra_gbps)


def activation_message_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """One micro-batch's b x s x h activation (or its gradient)."""
    full = m.seq_len * t.micro_batch_size * m.hidden * DTYPE_BYTES[t.dtype]
    # Narayanan et al. 2021 §4.1 scatter/gather: with sequence parallel each TP rank sends 1/t.
    return full / tp if t.sequence_parallel else full


def tp_bytes_per_layer_pass(m: ModelSpec, t: Training, tp: int) -> float:
    """Bytes one rank sends for TP in one layer's forward (or its input-grad backward)."""
    # Shoeybi et al. 2019 §3: two all-reduces per layer per pass (attention and MLP); with
    # sequence parallel each becomes all-gather + reduce-scatter of equal volume (Korthikanti
    # et al. 2022 §4.2.2).
    full = m.seq_len * t.micro_batch_size * m.hidden * DTYPE_BYTES[t.dtype]
    return 2.0 * ring_factor(tp) * full


def step_comm_bytes(
    m: ModelSpec, t: Training, layout: Layout, chunks: int, rank_params: int
) -> dict[str, float]:
    """Bytes one rank sends per step on each axis."""
    layers = max(layers_per_chunk(m, layout.pp, chunks, st) for st in range(layout.pp))
    work = t.microbatches * chunks * layers  # the busiest rank's layer passes
    tp_b = work * t.passes * tp_bytes_per_layer_pass(m, t, layout.tp) if layout.tp > 1 else 0.0
    # Each micro-batch crosses each of the rank's chunk boundaries forward and backward.
    crossings = 1.0 if t.forward_only else 2.0
    pp_b = crossings * t.microbatches * chunks * activation_message_bytes(m, t, layout.tp)
    pp_b = pp_b if layout.pp > 1 else 0.0
    grad = 0.0 if t.forward_only else rank_params * DTYPE_BYTES[t.dtype]
    # Rajbhandari et al. 2020 §7: ZeRO-1/2 move 2Ψ like all-reduce; ZeRO-3 adds a parameter
    # all-gather in backward, 3Ψ in all.
    dp_factor = ring_factor(layout.dp) * (1.5 if t.zero >= 3 else 1.0)
    return {"tp_bytes": tp_b, "pp_bytes": pp_b, "dp_bytes": grad * dp_factor}


def gemm_seconds(flops: float, hw: HardwareSpec) -> float:
    return flops / (hw.peak_tflops * 1e12 * GEMM_EFFICIENCY)


def _chunk_seconds(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, layers: int, tp_link: str
) -> tuple[float, float]:
    """(GEMM seconds, TP all-reduce seconds) of one chunk's forward on one rank."""
    tokens = t.micro_batch_size * m.seq_len
    gemm = gemm_seconds(layers * forward_flops_per_layer(m, tokens) / layout.tp, hw)
    if layout.tp == 1:
        return gemm, 0.0
    per = tp_bytes_per_layer_pass(m, t, layout.tp) / bandwidth_bps(hw, tp_link)
    return gemm, layers * (per + 2 * COLLECTIVE_LATENCY_S)


def _recompute_seconds(
    m: ModelSpec,
    hw: HardwareSpec,
    t: Training,
    layout: Layout,
    forward_s: float,
    stage: int,
    chunks: int,
) -> float:
    """Extra seconds in B: the whole forward again (full), or only attention (selective)."""
    if t.recompute == "full":
        return forward_s
    if t.recompute == "selective":  # Korthikanti et al. 2022 §5: QK^T, softmax, AV: 4bs^2h
        layers = layers_per_chunk(m, layout.pp, chunks, stage)
        tokens = t.micro_batch_size * m.seq_len
        return gemm_seconds(layers * 4.0 * tokens * m.seq_len * m.hidden / layout.tp, hw)
    return 0.0


def stage_durations(
    m: ModelSpec, hw: HardwareSpec, t: Training, layout: Layout, chunks: int, head_stage: int
) -> tuple[list[Durations], float]:
    """Per-rank F/B/W per chunk, and the busiest rank's TP seconds inside one chunk's F."""
    links = links_of(layout)
    p2p = activation_message_bytes(m, t, layout.tp) / bandwidth_bps(hw, links.pp)
    p2p = p2p + P2P_LATENCY_S if layout.pp > 1 else 0.0
    tokens = t.micro_batch_size * m.seq_len
    logits = gemm_seconds(forward_flops_logits(m, tokens) / layout.tp, hw) / chunks
    out, tp_max = [], 0.0
    for stage in range(layout.pp):
        gemm, tp_s = _chunk_seconds(
            m, hw, t, layout, layers_per_chunk(m, layout.pp, chunks, stage), links.tp
        )
        tp_max = max(tp_max, tp_s)
        extra = logits if stage == head_stage else 0.0  # spread over the rank's chunks
        recompute = _recompute_seconds(m, hw, t, layout, gemm + tp_s, stage, chunks)
        # Qi et al. 2024 §2: backward = input-grad (~1x F) + weight-grad (~1x F).
        out.append(
            Durations(f=gemm + tp_s + extra, b=gemm + tp_s + extra + recompute, w=gemm + extra,
                      p2p=p2p)
        )  # fmt: skip
    return out, tp_max


def dp_seconds(dp_bytes: float, hw: HardwareSpec, layout: Layout) -> float:
    if layout.dp == 1 or dp_bytes == 0:  # nothing to reduce (one replica, or no gradients)
        return 0.0
    return dp_bytes / bandwidth_bps(hw, links_of(layout).dp) + COLLECTIVE_LATENCY_S


def optimizer_seconds(rank_params: int, t: Training, dp: int, hw: HardwareSpec) -> float:
    # Adam is memory-bound: read and write fp32 master, m, v and read the grad: ~28 B/param
    # (Rajbhandari et al. 2020 §3 state sizes), over the rank's ZeRO shard.
    shard = rank_params / (dp if t.zero >= 1 else 1)
    return shard * 28.0 / (hw.hbm_tbps * 1e12)
