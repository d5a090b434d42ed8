"""Measurements -> the HardwareProfile ``meshscope calibrate`` writes (fits: calibrate_fit).

Each constant is read off the cost model itself, so the profile reproduces what was measured
when the model is run on the measured operations: GEMMs on compute.gemm_efficiency's curve,
links on comm.py's alpha-beta terms, attention's flash_fraction from one causal attention,
and kernel_overhead_us from one launch-bound transformer block (durations.layer_cost at 0
and 1 us per launch: the model is linear in it). Pure Python, no torch.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from app.core.cost import compute, durations
from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.hardware_profile import HardwareProfile, profile_of
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout
from gpu_probe.calibrate_fit import (
    LinkFit,
    LinkSample,
    fit_gemm,
    fit_links,
    kernel_overhead_us,
    link_seconds,
    link_terms,
)

# A fit whose fixed GEMM cost is 0 still needs gemm_half_gflop > 0 (the profile's bound).
MIN_HALF_GFLOP = 1e-9


@dataclass(frozen=True)
class OptimizerTiming:
    """One torch.optim.AdamW step (the probe's optimizer) over ``tensors`` parameter tensors
    holding ``params`` parameters."""

    params: int
    tensors: int
    seconds: float


@dataclass(frozen=True)
class BlockTiming:
    """One eager transformer block (gpu_probe.model.Block), forward plus backward."""

    hidden: int
    heads: int
    seq_len: int
    seconds: float


@dataclass(frozen=True)
class AttentionTiming:
    """One causal scaled_dot_product_attention forward of ``heads`` x ``seq_len`` x hidden."""

    hidden: int
    heads: int
    seq_len: int
    seconds: float


@dataclass(frozen=True)
class Measurements:
    """Everything calibrate measured, slowest rank per figure; seconds per operation."""

    host: str
    date: str
    device: str  # "cpu" or "cuda"
    backend: str
    dtype: str  # GEMMs, attention and the block ran in this ("fp32" or "bf16")
    world: int
    ranks_per_node: int
    memory_gib: float  # device memory per rank (CPU: the machine's RAM over its ranks)
    gemms: tuple[tuple[int, int, int, float], ...]  # (m, n, k, seconds)
    stream_bytes: float  # bytes read plus written by one large add
    stream_s: float
    attention: AttentionTiming
    block: BlockTiming
    intra: tuple[LinkSample, ...]  # inside one node
    inter: tuple[LinkSample, ...] = ()  # one member per node, when several nodes ran
    optimizer: OptimizerTiming | None = None  # None: not measured (optimizer_tensor_us 0)
    # The same block run between p2p exchanges, as a pipeline step runs its layers (CPU);
    # None where only the back-to-back timing exists (GPU, or no intra-node link).
    block_in_step: BlockTiming | None = None
    # Device memory in use that the caching allocator does not hold (CUDA context, NCCL
    # buffers, library workspaces): HardwareSpec.memory_floor_gib. None: not measured (CPU).
    floor_gib: float | None = None
    # One rank measures no link: the link figures are this preset's (--links-from).
    links_from: str | None = None

    @property
    def nodes(self) -> int:
        return self.world // self.ranks_per_node


def block_model(hidden: int, heads: int, seq_len: int) -> ModelSpec:
    """The probe's block as the cost model sees it: GPT MLP (4h, GELU), learned positions."""
    return ModelSpec("calibrate-block", 1, hidden, heads, seq_len, 2, 4 * hidden,
                     tied_embeddings=False, learned_positions=True)  # fmt: skip


def block_training(dtype: str) -> Training:
    # Flash: the probe's F.scaled_dot_product_attention; no recompute; one sequence.
    return Training(micro_batch_size=1, microbatches=1, dtype=dtype, recompute="none")


def block_compute_s(b: BlockTiming, hw: HardwareSpec, dtype: str, overhead_us: float) -> float:
    """The cost model's F + B + W for the timed block at ``overhead_us`` per kernel launch."""
    at = replace(hw, efficiency=replace(hw.efficiency, kernel_overhead_us=overhead_us))
    one_rank = Layout(1, 1, 1, ("tp", "pp", "dp"), 1)
    c = durations.layer_cost(block_model(b.hidden, b.heads, b.seq_len), at,
                             block_training(dtype), one_rank)  # fmt: skip
    return c.f + c.b + c.w


def flash_fraction(a: AttentionTiming, hw: HardwareSpec, dtype: str) -> float:
    """flash_fraction that makes compute.attention_seconds' forward equal the measured one."""
    at_one = replace(hw, efficiency=replace(hw.efficiency, flash_fraction=1.0))
    m = block_model(a.hidden, a.heads, a.seq_len)
    forward, _ = compute.attention_seconds(m, at_one, block_training(dtype), 1)
    return min(max(forward / a.seconds, 1e-6), 1.0)  # a fraction of the GEMM peak


def _preset_links(name: str) -> tuple[LinkFit, LinkFit]:
    """(intra, inter) as the preset states them, for a rank that had no peer to measure."""
    hw = HARDWARE[name]
    e = hw.efficiency
    intra = LinkFit(e.intra_latency_us, hw.intra_gbps * e.intra_busbw_fraction)
    return intra, LinkFit(e.inter_latency_us, hw.inter_gbps * e.inter_busbw_fraction)


def _link_fits(meas: Measurements) -> tuple[LinkFit, LinkFit]:
    """(intra, inter). One node cannot measure a network: inter copies intra then; a job of
    one rank per node has no intra group, so intra copies inter; one rank alone measures no
    link, so both are the named preset's."""
    if not meas.intra and not meas.inter:
        return _preset_links(meas.links_from or "")
    if meas.intra:
        # Collectives set the per-step latency and the bandwidth; p2p's latency is its own.
        intra = fit_links([s for s in meas.intra if s.op != "p2p"] or meas.intra)
        inter = fit_links(meas.inter, True, intra.latency_us) if meas.inter else intra
        return intra, inter
    inter = fit_links(meas.inter, True, 0.0)
    return inter, inter


def p2p_latency_us(meas: Measurements, intra: LinkFit) -> float:
    """The p2p exchanges' own latency, the bandwidth held at the joint fit's: gloo's p2p pays
    more per message than a collective's ring step, and pipeline sends are all p2p."""
    p2p = [s for s in meas.intra if s.op == "p2p"]
    if not p2p:
        return 0.0
    extra = [s.seconds - link_seconds(s, replace(intra, latency_us=0.0)) for s in p2p]
    lat = link_terms("p2p", 2, 0, False)[0]  # latency steps of one p2p message
    return max(statistics.median(extra) / lat, 0.0) if lat > 0 else 0.0  # lat: s per us


def spec_from(meas: Measurements, name: str, nics_per_node: int | None = None) -> HardwareSpec:
    """The hardware spec the measurements imply (see the module docstring for each fit)."""
    gemm = fit_gemm([2.0 * m * n * k for m, n, k, _ in meas.gemms], [g[3] for g in meas.gemms])
    intra, inter = _link_fits(meas)
    efficiency = Efficiency(
        gemm_max_fraction=1.0, gemm_half_gflop=max(gemm.half_gflop, MIN_HALF_GFLOP),
        flash_fraction=1.0, hbm_fraction=1.0, intra_busbw_fraction=1.0,
        inter_busbw_fraction=1.0, intra_latency_us=intra.latency_us,
        inter_latency_us=inter.latency_us, kernel_overhead_us=0.0,
        p2p_latency_us=_p2p_latency_us(meas, intra),
    )  # fmt: skip
    spec = HardwareSpec(
        name=name, peak_tflops=gemm.peak_tflops, hbm_gib=meas.memory_gib,
        hbm_tbps=meas.stream_bytes / meas.stream_s / 1e12, intra_gbps=intra.gbps,
        inter_gbps=inter.gbps, **_node_shape(meas, nics_per_node), source=source_of(meas),
        efficiency=efficiency, memory_floor_gib=meas.floor_gib or 0.0,
    )  # fmt: skip
    flash = flash_fraction(meas.attention, spec, meas.dtype)
    spec = replace(spec, efficiency=replace(efficiency, flash_fraction=flash))
    block = meas.block_in_step or meas.block
    bare = block_compute_s(block, spec, meas.dtype, 0.0)
    per_us = block_compute_s(block, spec, meas.dtype, 1.0) - bare
    overhead = kernel_overhead_us(block.seconds, bare, per_us)
    spec = replace(spec, efficiency=replace(spec.efficiency, kernel_overhead_us=overhead))
    per_tensor = optimizer_tensor_us(meas.optimizer, spec, meas.dtype)
    return replace(spec, efficiency=replace(spec.efficiency, optimizer_tensor_us=per_tensor))


def _p2p_latency_us(meas: Measurements, intra: LinkFit) -> float:
    if meas.intra:
        return p2p_latency_us(meas, intra)
    return HARDWARE[meas.links_from].efficiency.p2p_latency_us if meas.links_from else 0.0


def _node_shape(meas: Measurements, nics_per_node: int | None) -> dict[str, int]:
    """What ran, or, for one rank alone, the node of the preset its links come from: one GPU
    calibrated stands for its machine's GPUs, which a plan spreads a job over."""
    if meas.links_from and not meas.intra and not meas.inter:
        hw = HARDWARE[meas.links_from]
        nics = nics_per_node or hw.nics_per_node
        return {"gpus_per_node": hw.gpus_per_node, "nics_per_node": nics,
                "nvlink_domain": hw.nvlink_domain}  # fmt: skip
    nics = nics_per_node or meas.ranks_per_node
    return {"gpus_per_node": meas.ranks_per_node, "nics_per_node": nics, "nvlink_domain": 0}


def optimizer_tensor_us(o: OptimizerTiming | None, hw: HardwareSpec, dtype: str) -> float:
    """What the measured step took beyond compute.optimizer_seconds' bytes and launches, per
    tensor (the model is linear in it); 0 when not measured or nothing is left."""
    if o is None or o.tensors == 0:
        return 0.0
    modelled = compute.optimizer_seconds(o.params, block_training(dtype), 1, hw)
    return max(o.seconds - modelled, 0.0) / o.tensors * 1e6


def source_of(meas: Measurements) -> str:
    where = f"measured by meshscope calibrate on {meas.host[:64]} {meas.date}"
    net = "" if meas.inter else "; one node: inter_* copy intra_*"
    net = net if meas.intra else "; one rank per node: intra_* copy inter_*"
    if not meas.intra and not meas.inter:
        net = f"; one rank: links and node shape from the {meas.links_from} preset"
    if meas.floor_gib is not None:
        net += f"; floor {meas.floor_gib:.2f} GiB outside the caching allocator"
    return (f"{where} ({meas.dtype} GEMMs: use with dtype={meas.dtype}; {meas.world} ranks, "
            f"{meas.device}/{meas.backend}{net})")  # fmt: skip


def profile_from(
    meas: Measurements, name: str, nics_per_node: int | None = None
) -> HardwareProfile:
    """The validated HardwareProfile (raises pydantic's ValidationError naming the field)."""
    return profile_of(spec_from(meas, name, nics_per_node))
