"""What compute hides of the DP and ZeRO communication, and what stays exposed."""

from __future__ import annotations

from app.core.simulate import Durations

# Megatron-LM distributed/param_and_grad_buffer.py: buckets of at least 40M parameters.
BUCKET_PARAMS = 40_000_000


def exposed_gather_s(gather_s: float, compute_s: float, prefetch: bool) -> float:
    """A ZeRO-3 parameter gather before a chunk pass: prefetched, it runs under the previous
    pass and only what exceeds it shows (Zhao et al. 2023, FSDP §3.3); else it waits in full."""
    return max(0.0, gather_s - compute_s) if prefetch else gather_s


def exposed_tp_s(tp_s: float, gemm_s: float, tp: int) -> float:
    """A pass's TP all-gathers and reduce-scatters when each is split into tp pieces and
    pipelined with the GEMM it feeds or drains (Wang et al. ASPLOS 2023, "Overlap
    Communication with Dependent Computation via Decomposition" §3; Megatron-LM
    --tp-comm-overlap via Transformer Engine userbuffers): the GEMM hides the collective
    except one piece, which cannot start (or finish) under it, and whatever outlasts it."""
    return max(tp_s / tp, tp_s - gemm_s)


def exposed_grad_sync_s(
    sync_s: float,
    rank_params: int,
    last_backward: Durations,
    chunks: int,
    overlap: bool,
    busy_s: float = 0.0,
) -> float:
    """Seconds of the gradient sync left after the pipeline drains.

    Overlapped (Li et al. 2020, PyTorch DDP §3.2.3; Megatron --overlap-grad-reduce), buckets
    are reduced while the last micro-batch's backward still runs on this rank, so only what
    exceeds that backward shows, and never less than the last bucket, which is ready last.
    ``busy_s``: seconds of that backward the same link spends on other transfers (ZeRO-3's
    weight gathers), which the window loses.
    """
    if not overlap or sync_s == 0:
        return sync_s
    window = max(0.0, chunks * (last_backward.b + last_backward.w) - busy_s)
    last_bucket = sync_s * min(1.0, BUCKET_PARAMS / max(rank_params, 1))
    return max(last_bucket, sync_s - window)


def overlapped_pair_s(f_compute: float, f_comm: float, b_compute: float, b_comm: float) -> float:
    """Seconds of one overlapped forward+backward pair (DualPipe(V)'s F&B).

    DeepSeek-V3 (arXiv 2412.19437) §3.2.1: in a pair of chunks, the computation of one hides
    the communication of the other. Both computations still share the GPU, so they add; each
    side's communication shows only where it outlasts the other side's computation.
    """
    return f_compute + b_compute + max(0.0, f_comm - b_compute) + max(0.0, b_comm - f_compute)
