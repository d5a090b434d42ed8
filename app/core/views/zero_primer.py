"""ZeRO-0/1/2/3 for one scenario: what each DP rank stores and when each collective runs.

Rajbhandari et al. 2020 (ZeRO, §5): stage 1 partitions the optimizer states over the N_d
data-parallel ranks, stage 2 the gradients too, stage 3 the parameters too. Each rank owns
the 1/N_d slice of the parameter index range at its DP coordinate. The per-GPU bytes are
the cost model's (app/core/cost/memory.py), the collective bytes app/core/cost/comm.py's.
"""

from __future__ import annotations

from dataclasses import replace

from app.core.cost.memory import state_bytes_per_param
from app.core.inputs.training import Training

STAGES = (0, 1, 2, 3)
# Which model state each stage partitions (ZeRO §5.1-5.3, cumulative).
PARTITIONED = {
    "optimizer": 1,
    "grads": 2,
    "weights": 3,
}


def shards(params: int, dp_ranks: list[int]) -> list[dict[str, int]]:
    """Each DP rank's slice [first, last) of the stage's parameter indices: contiguous,
    disjoint, covering all params (DeepSpeed's flat partition, stage_1_and_2.py)."""
    n = len(dp_ranks)
    out = []
    for i, rank in enumerate(dp_ranks):
        lo, hi = i * params // n, (i + 1) * params // n
        out.append({"rank": rank, "dp": i, "first_param": lo, "last_param": hi, "params": hi - lo})
    return out


def stage_bytes(params: int, t: Training, dp: int, zero: int) -> dict[str, float]:
    """Per-GPU weights, grads and optimizer bytes at ``zero``: the cost model's formula."""
    w, g, o = state_bytes_per_param(replace(t, zero=zero), dp)
    return {"weights_bytes": params * w, "grads_bytes": params * g, "optimizer_bytes": params * o}


def _entry(phase: str, collective: str | None, what: str, each: float, count: int, repeats: int):
    return {
        "phase": phase,
        "collective": collective,
        "what": what,
        "each_bytes": each,
        "count": count,
        "repeats": repeats,
        "bytes": each * count * repeats,
    }


def schedule(params: int, t: Training, dp: int, zero: int, layers: int) -> list[dict[str, object]]:
    """One step's DP collectives under ``zero``, bytes each rank sends, in order.

    ZeRO-3 (§5.3): all-gather each layer's parameters before its forward and again before its
    backward, every micro-batch, and reduce-scatter each layer's gradients after its backward
    (once per step, as comm.step_comm_bytes counts it). ZeRO-1/2 (§5.1-5.2): reduce-scatter
    the gradients after the backward, step on the owned slice, all-gather the updated
    parameters. ZeRO-0: a plain all-reduce.
    """
    full = params * t.element_bytes  # the rank's parameters (or gradients) in 16-bit
    # NCCL docs, Collective Operations: a reduce-scatter or all-gather moves (n-1)/n of the
    # buffer through each rank, an all-reduce twice that.
    share = (dp - 1) / dp * full if dp > 1 else 0.0
    m, out = t.microbatches, []
    if zero >= 3:
        per_layer = share / layers  # an even share per layer (embedding and head included)
        out.append(_entry("forward", "all_gather", "params", per_layer, layers, m))
        if not t.forward_only:
            out.append(_entry("backward", "all_gather", "params", per_layer, layers, m))
            out.append(_entry("backward", "reduce_scatter", "grads", per_layer, layers, 1))
    elif not t.forward_only and zero >= 1:
        out.append(_entry("after_backward", "reduce_scatter", "grads", share, 1, 1))
    elif not t.forward_only:
        out.append(_entry("after_backward", "all_reduce", "grads", 2 * share, 1, 1))
    if not t.forward_only:
        out.append(_entry("step", None, "optimizer_slice" if zero >= 1 else "optimizer", 0.0, 1, 1))
        if zero in (1, 2):
            out.append(_entry("after_step", "all_gather", "params", share, 1, 1))
    return out


def zero_json(
    params: int,
    t: Training,
    dp_ranks: list[int],
    layers: int,
    activations_bytes: float,
) -> dict[str, object]:
    """Every ZeRO stage for one pipeline stage's rank: per-GPU bytes, partitions, schedule;
    ``t.zero`` is the scenario's own stage."""
    dp = len(dp_ranks)
    stages = []
    for z in STAGES:
        parts = stage_bytes(params, t, dp, z)
        plan = schedule(params, t, dp, z, layers)
        stages.append({
            "zero": z,
            **parts,
            "activations_bytes": activations_bytes,
            "total_bytes": sum(parts.values()) + activations_bytes,
            "partitioned": {k: z >= need for k, need in PARTITIONED.items()},
            "schedule": plan,
            "step_bytes": sum(e["bytes"] for e in plan),
        })  # fmt: skip
    return {
        "dp": dp,
        "ranks": list(dp_ranks),
        "selected": t.zero,
        "params": params,
        "layers": layers,
        "shards": shards(params, dp_ranks),
        "stages": stages,
    }
