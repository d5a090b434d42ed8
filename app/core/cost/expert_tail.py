"""The step tail of a mixture of experts' expert weights: their gradients are reduced and
their optimizer states sharded over the expert-data-parallel group, at 1/etp of each expert,
not over dp x cp at 1/tp as the dense weights are.

Megatron-LM distributed_data_parallel.py gives the expert parameters buffers of their own,
reduced over parallel_state.get_expert_data_parallel_group(); its distributed optimizer
shards them over the same group (distrib_optimizer.py, the expert buffers' data-parallel
group). The expert grid (etp x ep x edp) folds over tp x cp x dp (layout/mesh.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost import comm, overlap
from app.core.cost.memory_states import expert_params_per_layer
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training
from app.core.layout.topology import Layout


@dataclass(frozen=True)
class ExpertShare:
    """The routed-expert weights of the rank the tail prices (the most-parameter rank)."""

    counted: int  # as rank_params counts them: each expert's 1/tp
    held: int  # as the rank holds them: each expert's 1/etp
    edp: int  # the expert-data-parallel group's size (the gradient sync's and ZeRO's)


def share(m: ModelSpec, layout: Layout, params: list[int], layers: list[list[int]]) -> ExpertShare:
    """The ExpertShare of the rank with the most parameters (as rank_params = max(params));
    ``m`` as the ranks hold it (shapes.as_held: experts/ep), ``layers`` each rank's chunks."""
    if not m.experts:
        return ExpertShare(0, 0, 1)
    n = sum(layers[max(range(len(params)), key=params.__getitem__)])
    routed = n * expert_params_per_layer(m)  # memory._expert_states: the same counts
    return ExpertShare(int(routed // layout.tp), int(routed // layout.expert_tp), _edp(layout))


def _edp(layout: Layout) -> int:
    # Megatron-LM parallel_state.py: expert_data_parallel_size = world // (etp x ep x pp).
    return layout.tp * layout.cp * layout.dp // (layout.expert_tp * layout.ep)


def dense_params(rank_params: int, ex: ExpertShare | None) -> int:
    """rank_params without its routed experts: what the dense gradient sync reduces."""
    return rank_params - (ex.counted if ex else 0)


def sync_s(ex: ExpertShare | None, t: Training, layout: Layout, hw: HardwareSpec) -> float:
    """The expert gradients' reduction over the expert-data-parallel group: an all-reduce
    (ZeRO 0-2), or under ZeRO-3 a reduce-scatter, in 40M-parameter buckets as the dense
    gradients (overlap.BUCKET_PARAMS)."""
    if ex is None or not ex.held or t.forward_only or ex.edp == 1:
        return 0.0
    place = comm.placement(layout, "edp", hw.domain_size)
    grads = ex.held * t.grad_bytes
    buckets = max(1, -(-ex.held // overlap.BUCKET_PARAMS))
    if t.zero < 3:
        return comm.all_reduce_s(grads, place, hw, buckets)
    return comm.all_gather_s(grads, place, hw, messages=buckets, sharded=True)


def optimizer_params(rank_params: int, ex: ExpertShare | None, t: Training, dp: int) -> float:
    """Parameters whose optimizer step costs as much, over ``dp`` shards, as the rank's
    dense shard (rank_params' dense part over dp) plus its expert shard (held over edp):
    compute.optimizer_seconds divides what it is given by dp under ZeRO >= 1."""
    if ex is None or not ex.held:
        return float(rank_params)
    dense = dense_params(rank_params, ex)
    if t.zero < 1:
        return float(dense + ex.held)
    return dense + ex.held * dp / ex.edp


def sent_bytes(ex: ExpertShare | None, t: Training) -> float:
    """What sync_s moves through each rank, as comm.step_comm_bytes counts the dense DP bytes
    (Rajbhandari et al. 2020 §7): 2Ψ(n-1)/n all-reduced, or under ZeRO-3 Ψ(n-1)/n
    reduce-scattered plus the weights gathered twice per micro-batch, over the edp group."""
    if ex is None or not ex.held or t.forward_only or ex.edp == 1:
        return 0.0
    grad, n = ex.held * t.grad_bytes, ex.edp
    if t.zero >= 3:
        return (n - 1) / n * (ex.held * t.gather_bytes * comm.zero3_gathers(t) + grad)
    return grad * comm.ring_factor(n)
