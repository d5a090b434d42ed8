"""Memory per pipeline stage, by component: weights, gradients and their fp32 accumulation
buffer, optimizer state (memory_states), kept activations (memory_activations), the loss's
and the recompute's transients, ZeRO-3's gathered weights, the allocator's fragmentation and
the per-process floor (memory_transients). Notation as in Narayanan et al. 2021 and
Korthikanti et al. 2022: l layers, h hidden, a heads, s sequence, V vocabulary, b micro-batch
size, t = tp, p = pp.

Three figures per GPU, as PyTorch reports them: allocated (live tensors at the peak,
torch.cuda.max_memory_allocated), reserved (the caching allocator's pool, max_memory_reserved:
allocated plus its fragmentation) and total (reserved plus the floor outside the allocator,
what nvidia-smi shows), which is what must fit in HBM."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

from app.core.cost import fp8
from app.core.cost.memory_activations import (  # noqa: F401  (the stage's public names)
    W_OF_B,
    activation_bytes_per_layer,
    chunk_activation_bytes,
    held_frontier,
    layer_bytes,
    recompute_bytes_per_layer,
    w_pass_share,
)
from app.core.cost.memory_states import (  # noqa: F401
    Ends,
    chunk_params,
    embedding_params,
    end_params,
    expert_params_per_layer,
    grad_parts,
    head_params,
    layer_matmul_params,
    layer_params,
    layer_tensors,
    rank_params,
    stage_params,
    state_bytes_per_param,
    total_params,
)
from app.core.cost.memory_transients import (  # noqa: F401
    FRAGMENTATION,
    floor_bytes,
    fragmentation_bytes,
    gather_bytes,
    logits_transient_bytes,
    root_grads_bytes,
)
from app.core.cost.shapes import even_chunk_layers
from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training


@dataclass(frozen=True)
class StageMemory:
    """One rank of a pipeline stage at its peak, bytes. The parts sum to total_bytes."""

    stage: int
    params: int
    weights_bytes: float
    grads_bytes: float  # 16-bit gradients (0 where an fp32 buffer replaces them)
    optimizer_bytes: float
    activations_bytes: float  # kept from F to B (and B to W) by the micro-batches in flight
    layers: tuple[int, ...] = ()  # transformer layers of each of the rank's chunks
    grad_accum_bytes: float = 0.0  # the fp32 gradient buffer (Megatron's main_grad)
    gather_bytes: float = 0.0  # ZeRO-3: other ranks' shards of the two gathered units
    logits_transient_bytes: float = 0.0  # the head rank's loss peak, one micro-batch
    # The backward rebuilds one recomputed layer at a time, after the loss: only what that
    # exceeds the loss's transient by adds to the peak.
    recompute_transient_bytes: float = 0.0
    # ZeRO-2/3's root unit (embedding and head) at the backward's end, when activations and the
    # loss's transient are gone: only what its gradients exceed those by adds to the peak.
    root_grads_bytes: float = 0.0
    fragmentation_bytes: float = 0.0  # reserved by the caching allocator beyond allocated
    floor_bytes: float = 0.0  # CUDA context and NCCL buffers, outside the allocator

    @classmethod
    def of(cls, *values: Any) -> StageMemory:
        """An instance from every field's value in order, without the frozen __init__'s
        per-field object.__setattr__: the planner builds one per stage of thousands of
        candidates."""
        obj = object.__new__(cls)
        obj.__dict__.update(zip(FIELDS, values, strict=True))
        return obj

    @property
    def allocated_bytes(self) -> float:
        return (
            self.weights_bytes + self.grads_bytes + self.grad_accum_bytes + self.optimizer_bytes
            + self.activations_bytes + self.gather_bytes + self.logits_transient_bytes
            + self.recompute_transient_bytes + self.root_grads_bytes
        )  # fmt: skip

    @property
    def reserved_bytes(self) -> float:
        return self.allocated_bytes + self.fragmentation_bytes

    @property
    def total_bytes(self) -> float:
        """What the GPU holds at this rank's peak: reserved plus the floor; OOM above HBM."""
        return self.reserved_bytes + self.floor_bytes


FIELDS = tuple(f.name for f in fields(StageMemory))


@lru_cache(maxsize=256)
def _rates(m: ModelSpec, t: Training, dp: int, tp: int) -> tuple:
    """What stage_memory needs of one (model, training, dp, tp), whatever the stage: the
    planner prices thousands of candidates that share them (hence the cache)."""
    w, g, o = state_bytes_per_param(t, dp)
    g16, gacc = grad_parts(t)
    share = g16 / (g16 + gacc) if g16 + gacc else 0.0  # the 16-bit part of g
    # ZeRO-3's units (FSDP wraps each layer, the embedding and the head), whole.
    units = (layer_params(m), embedding_params(m), head_params(m))
    # The root unit's gradients at the backward's end, by which ends the rank holds.
    sharded = t.zero >= 2 and dp > 1
    roots = {
        ends: root_grads_bytes(_root_params(m, *ends) // tp if sharded else 0, t, dp)
        for ends in ((False, False), (False, True), (True, False), (True, True))
    }
    return (
        w, g, o, share,
        activation_bytes_per_layer(m, t, tp),
        recompute_bytes_per_layer(m, t, tp),
        logits_transient_bytes(m, t, tp),
        fragmentation_bytes(1.0, t, dp),  # per allocated byte
        units,
        roots,
        _expert_rates(m, t, dp, tp),
    )  # fmt: skip


def _expert_rates(m: ModelSpec, t: Training, dp: int, tp: int) -> tuple | None:
    """What _expert_states needs of one (model, training, dp, tp), whatever the stage: the
    routed experts per layer, etp, and the state bytes per parameter over the expert-data-
    parallel group, tp x dp x cp / (etp x ep) ranks (Megatron-LM parallel_state.py: the
    expert grid's edp group; distributed optimizer shards expert parameters over it). None
    where that group and split are the dense ones."""
    if not m.experts:
        return None
    etp = t.expert_tp(tp)
    edp = max(1, dp * tp // (etp * m.expert_shards))  # dp: stage_memory's group, dp x cp
    if edp == dp and etp == tp:
        return None
    return expert_params_per_layer(m), etp, state_bytes_per_param(t, edp)


def _expert_states(
    n: int, tp: int, states: tuple, share: float, dense: tuple, expert: tuple
) -> tuple:
    """``states`` of a rank of ``n`` layers with its expert weights split over etp (not tp)
    and sharded by ZeRO over the expert-data-parallel group instead of dp (_expert_rates);
    ``dense``: the (weights, grads, optimizer) bytes per parameter states counted them at."""
    per_layer, etp, (we, ge, oe) = expert
    counted, held = n * per_layer // tp, n * per_layer // etp
    w, g, o = dense
    dg = held * ge - counted * g
    return (
        states[0] + held * we - counted * w,
        states[1] + dg * share,
        states[2] + dg * (1.0 - share),
        states[3] + held * oe - counted * o,
    )


def _root_params(m: ModelSpec, emb: bool, head: bool) -> int:
    """The embedding and the head a rank holds (a tied head beside its embedding: the norm)."""
    n = embedding_params(m) if emb else 0
    if head:
        n += 2 * m.hidden if (m.tied_embeddings and emb) else head_params(m)
    return n


def stage_memory(
    m: ModelSpec,
    t: Training,
    par: tuple[int, int, int],
    chunks: int,
    head_stage: int,
    inflight: list[int],
    layers: list[list[int]] | None = None,
    held: list[int] | None = None,
    ends: list[list[tuple[bool, bool]]] | None = None,
    frontier: list[list[tuple[int, int]]] | None = None,
    params: list[int] | None = None,
    *,
    hw: HardwareSpec | None = None,
) -> list[StageMemory]:
    """Memory per rank of each stage; ``par`` = (dp, tp, pp), ``inflight`` from the schedule.

    ``layers[rank][chunk]`` is the split (default: even); ``held`` the peak layer-micro-batches
    of activations each rank keeps (simulate.peak_held), which with unequal chunks depends on
    which chunks are in flight at the peak; by default inflight times the rank's largest chunk.
    ``frontier`` (held_frontier, split-backward schedules) replaces both: the peak of what F's
    keep for their B plus what B's keep for their W, at w_pass_share bytes per layer.
    ``params``: rank_params, where the caller has it already (the planner's cache).
    ``hw``: the hardware whose per-process floor the total carries (none without it).
    """
    dp, tp, pp = par
    # ZeRO shards over the data-parallel ranks with the context-parallel ones, which hold the
    # same weights (Megatron-LM distributed_data_parallel.py's intra_dp_cp_group; torchtitan's
    # FSDP mesh dp_shard_cp): every state and gather below divides by dp x cp.
    dp = (t.dp_shard or dp) * t.cp  # HSDP: one shard group's (Training.dp_shard)
    w, g, o, share, act_layer, rebuilt, logits, frag, units, roots, expert = _rates(m, t, dp, tp)
    floor = floor_bytes(hw)
    layers = layers or even_chunk_layers(m, pp, chunks)
    w_share = w_pass_share(m, t, tp) if frontier is not None else 0.0
    params_of, out = params, []
    zero3 = t.zero >= 3 and dp > 1
    partly = t.recompute == "full" and t.recompute_layers is not None
    for stage in range(pp):
        row_ends = ends[stage] if ends else None
        params = (
            params_of[stage]
            if params_of
            else stage_params(m, stage, pp, tp, chunks, head_stage, layers[stage], row_ends)
        )
        biggest = max(layers[stage])
        kept = held[stage] if held is not None else inflight[stage] * biggest
        if frontier is not None:  # split backward: a W's activations stay from its B on
            kept = max(f + w_share * w for f, w in frontier[stage])
        if t.recompute_layers is not None:  # a partly recomputed stage: its own mix
            act_layer = chunk_activation_bytes(m, t, tp, biggest)
        holds_emb = any(e for e, _ in row_ends) if row_ends else stage == 0
        holds_head = any(head for _, head in row_ends) if row_ends else stage == head_stage
        loss = logits if holds_head else 0.0
        # Layers this stage recomputes: none where recompute_layers spares all of them.
        again = 0.0 if partly and not t.recomputed(biggest) else rebuilt
        gather = 0.0
        if zero3:
            unit = max(units[0], units[1] if holds_emb else 0, units[2] if holds_head else 0)
            gather = gather_bytes(unit // tp, params, t, dp)
        states = params * w, params * g * share, params * g * (1.0 - share), params * o
        if t.fp8 != "none":  # FP8 weight copies beside the 16-bit weights (cost/fp8.py)
            cache = fp8.weight_cache_bytes(m, t, tp, sum(layers[stage]))
            states = (states[0] + cache, *states[1:])
        if expert is not None:
            states = _expert_states(sum(layers[stage]), tp, states, share, (w, g, o), expert)
        act, extra = act_layer * kept, max(again - loss, 0.0)
        at_end = max(roots[holds_emb, holds_head] - (act + loss + extra), 0.0)
        allocated = sum(states) + act + gather + loss + extra + at_end
        out.append(
            StageMemory.of(
                stage,
                params,
                states[0],
                states[1],
                states[3],
                act,
                tuple(layers[stage]),
                states[2],
                gather,
                loss,
                extra,
                at_end,
                allocated * frag,
                floor,
            )  # fmt: skip
        )
    return out
