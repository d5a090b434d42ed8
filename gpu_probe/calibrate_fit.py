"""The fits behind ``meshscope calibrate``: measured seconds -> the cost model's constants.

Pure Python, no torch and no cost model: tests/core checks them on synthetic data;
calibrate_profile.py runs them on rank 0's gathered measurements. Every fit is linear least
squares on *relative* error,

    minimise  sum_i ((x_i . theta - t_i) / t_i)^2          (weights 1 / t_i^2)

which to first order is least squares on log time (log t' - log t ~ (t' - t) / t): a 4 KiB
message and a 4 MiB one count alike, as they do on a log axis. Unlike a fit of log time it
stays linear in theta, so it has a closed form and recovers noise-free data exactly. theta
is kept non-negative (a latency or a time per byte below zero is noise, not hardware).

GEMMs. ``compute.gemm_efficiency`` is e(g) = f g / (g + h) at g GFLOP, so a GEMM of F FLOPs
takes F / (P e) = F / (P f) + h 1e9 / (P f): a fixed cost t0 plus F at the rate R = P f.
Only the product P f is identifiable from times, so the profile takes peak_tflops = R (the
measured large-GEMM rate), gemm_max_fraction = 1 and gemm_half_gflop = t0 R / 1e9.

Links. ``comm.py`` is alpha-beta: a collective takes c_lat * latency + c_bw * bytes / busbw,
with per-op coefficients (``link_terms``) read off comm.all_reduce_s, all_gather_s and p2p_s.
One joint fit over every op and size gives (latency_us, 1 / GB/s), written as intra_gbps with
intra_busbw_fraction = 1 (inter_* likewise across nodes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

LINK_OPS = ("all_reduce", "all_gather", "p2p")


def relative_least_squares(
    rows: Sequence[tuple[float, float]],
    targets: Sequence[float],
    scales: Sequence[float] | None = None,
) -> tuple[float, float]:
    """theta = (a, b) >= 0 minimising sum(((a x0 + b x1) - y) / scale)^2, scale = y unless
    given (a target shifted by a known offset keeps its measured time as its scale).

    Two unknowns: the normal equations by Cramer's rule; when the free optimum has a
    negative component the constrained one lies on that axis, fitted alone.
    """
    scales = targets if scales is None else scales
    if not rows or not len(rows) == len(targets) == len(scales):
        raise ValueError("need one target and scale per row, and at least one row")
    if any(s <= 0 for s in scales):
        raise ValueError("times must be positive")
    xs = [(x0 / s, x1 / s, y / s) for (x0, x1), y, s in zip(rows, targets, scales, strict=True)]
    s00 = sum(a * a for a, _, _ in xs)
    s01 = sum(a * b for a, b, _ in xs)
    s11 = sum(b * b for _, b, _ in xs)
    r0, r1 = sum(a * y for a, _, y in xs), sum(b * y for _, b, y in xs)
    det = s00 * s11 - s01 * s01
    if det > 1e-12 * s00 * s11:
        a, b = (r0 * s11 - r1 * s01) / det, (r1 * s00 - r0 * s01) / det
        if a >= 0 and b >= 0:
            return a, b
    only_a = (max(r0, 0.0) / s00 if s00 else 0.0, 0.0)
    only_b = (0.0, max(r1, 0.0) / s11 if s11 else 0.0)
    return min((only_a, only_b), key=lambda th: _sse(xs, th))


def _sse(xs, theta) -> float:
    return sum((theta[0] * a + theta[1] * b - y) ** 2 for a, b, y in xs)


# -- GEMMs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GemmFit:
    rate_flops: float  # R: FLOP/s of a large GEMM
    fixed_s: float  # t0: what a GEMM of no work would take

    def seconds(self, flops: float) -> float:
        return self.fixed_s + flops / self.rate_flops

    @property
    def peak_tflops(self) -> float:
        return self.rate_flops / 1e12

    @property
    def half_gflop(self) -> float:
        """gemm_half_gflop with gemm_max_fraction = 1: the size that runs at half of R."""
        return self.fixed_s * self.rate_flops / 1e9


def fit_gemm(flops: Sequence[float], seconds: Sequence[float]) -> GemmFit:
    """t = t0 + F / R over a sweep of GEMMs (see the module docstring)."""
    t0, per_flop = relative_least_squares([(1.0, f) for f in flops], seconds)
    if per_flop <= 0:
        raise ValueError("GEMM times do not grow with FLOPs: sweep larger sizes")
    return GemmFit(rate_flops=1.0 / per_flop, fixed_s=t0)


# -- links -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkFit:
    latency_us: float  # per step, as intra_latency_us / inter_latency_us
    gbps: float  # bus bandwidth, GB/s, as intra_gbps / inter_gbps with busbw_fraction 1


def link_terms(op: str, n: int, nbytes: float, across_nodes: bool) -> tuple[float, float]:
    """(seconds per latency_us, seconds per 1/GB/s) of one ``op`` of ``nbytes`` in a group of
    ``n``: all_reduce and all_gather as comm.all_reduce_s / all_gather_s (nbytes is the
    all-gather's output), p2p as comm.p2p_s (n = 2). Inside one domain (a node) the ring has
    n - 1 steps; ``across_nodes`` is a group of one member per node, as a DP group over nodes:
    its all-reduce latency is ceil(log2 n) tree steps, its all-gather's n crossings less the
    one step comm.ring_latency_s counts at intra latency (``link_offset_s``)."""
    per_byte = 1e-9 * nbytes
    if op == "p2p":
        return 1e-6, per_byte
    if op == "all_reduce":
        steps = math.ceil(math.log2(n)) if across_nodes else n - 1
        return 2e-6 * steps, 2.0 * (n - 1) / n * per_byte
    if op == "all_gather":
        return 1e-6 * (n if across_nodes else n - 1), (n - 1) / n * per_byte
    raise ValueError(f"unknown op {op!r}; one of {LINK_OPS}")


def link_offset_s(op: str, across_nodes: bool, intra_latency_us: float) -> float:
    """Seconds comm.py adds beyond link_terms: across nodes its ring-latency formula counts
    (n - 1 - crossings) = -1 intra steps for a group of one member per node."""
    if across_nodes and op == "all_gather":
        return -1e-6 * intra_latency_us
    return 0.0


@dataclass(frozen=True)
class LinkSample:
    op: str
    group_size: int
    nbytes: float
    seconds: float


def fit_links(
    samples: Sequence[LinkSample], across_nodes: bool = False, intra_latency_us: float = 0.0
) -> LinkFit:
    """One (latency, bandwidth) pair for every op and size of one kind of group.

    Times that do not grow with bytes (a sweep too short for the bandwidth to show, or noise
    larger than it) leave the bandwidth unidentified: then it is bounded from below by the
    sample whose bytes weigh most, as if all of its time were transfer."""
    if not samples:
        raise ValueError("no link samples")
    rows = [link_terms(s.op, s.group_size, s.nbytes, across_nodes) for s in samples]
    offsets = [link_offset_s(s.op, across_nodes, intra_latency_us) for s in samples]
    measured = [s.seconds for s in samples]
    targets = [t - off for t, off in zip(measured, offsets, strict=True)]
    lat, inv_gbps = relative_least_squares(rows, targets, measured)
    if inv_gbps <= 0:
        (_, per_gbps), t = max(zip(rows, targets, strict=True), key=lambda rt: rt[0][1])
        inv_gbps = max(t, 1e-12) / per_gbps
    return LinkFit(latency_us=lat, gbps=1.0 / inv_gbps)


def link_seconds(s: LinkSample, fit: LinkFit, across_nodes=False, intra_latency_us=0.0) -> float:
    """The fitted model's time for one sample (for residuals and the self-check)."""
    lat, per_gbps = link_terms(s.op, s.group_size, s.nbytes, across_nodes)
    offset = link_offset_s(s.op, across_nodes, intra_latency_us)
    return lat * fit.latency_us + per_gbps / fit.gbps + offset


# -- host overhead ---------------------------------------------------------------------------


def kernel_overhead_us(measured_s: float, bare_s: float, per_us_s: float) -> float:
    """Per-kernel host time: what a launch-bound layer took beyond the cost model's own time
    for it (GEMM curve, roofline, attention), over ``per_us_s``, the seconds the model adds
    to that layer per microsecond of kernel_overhead_us (it is linear in it)."""
    if per_us_s <= 0:
        raise ValueError("the cost model charges this layer no kernel launches")
    return max(measured_s - bare_s, 0.0) / per_us_s
