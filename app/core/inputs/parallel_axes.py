"""The rules on cp and ep, each reported against the field to change (ScenarioError, keyed).

cp: Megatron-LM and TransformerEngine split each sequence into 2 x cp equal chunks and give
CP rank i chunks i and 2cp-1-i, so causal attention costs every rank the same (Megatron-LM
megatron/core/utils.py get_batch_on_this_cp_rank, per-sequence zigzag over 2 * cp_size
chunks; TransformerEngine's attention context_parallel.py splits the same way):
seq % (2 x cp) == 0.
ep: Megatron's expert grid folds over dp x cp (app/core/layout/mesh.py), so ep divides dp x cp,
and the two grids share their pipeline groups.
"""

from __future__ import annotations

from app.core.inputs.scenario import MAX_WORLD, Scenario
from app.core.inputs.scenario_fields import ScenarioError
from app.core.layout import mesh
from app.core.layout.topology import parse_order


def check_axes(s: Scenario) -> None:
    """Before the layout: the world with cp, and ep's folding over dp x cp."""
    world = s.world_size  # tp x cp x pp x dp
    if s.cp > 1 and world > MAX_WORLD:
        raise ScenarioError.keyed(
            "cp", "scenario.world_cp",
            "world size dp*tp*pp*cp = {dp}*{tp}*{pp}*{cp} = {world} > {limit}",
            dp=s.dp, tp=s.tp, pp=s.pp, cp=s.cp, world=world, limit=MAX_WORLD,
        )  # fmt: skip
    _check_hsdp(s)
    sizes = {"dp": s.dp, "tp": s.tp, "pp": s.pp, "cp": s.cp, "ep": s.ep, "etp": s.etp or s.tp}
    problem = mesh.fold_problem(parse_order(s.order), sizes)
    _check_etp(s, problem)
    if problem == "divides":
        raise ScenarioError.keyed(
            "ep", "scenario.ep_divides",
            "ep = {ep} must divide dp*cp = {dp}*{cp} = {n}: the expert-parallel groups "
            "re-partition the data- and context-parallel ranks (Megatron)",
            ep=s.ep, dp=s.dp, cp=s.cp, n=s.dp * s.cp,
        )  # fmt: skip
    if problem == "pipeline":
        raise ScenarioError.keyed(
            "ep", "scenario.ep_pipeline",
            "with order {order} the expert groups would break the pipeline groups: put pp "
            "last (e.g. order=megatron-5d) or set ep = cp = {cp} (Megatron)",
            order=s.order, cp=s.cp,
        )  # fmt: skip


def _check_etp(s: Scenario, problem: str | None) -> None:
    """etp other than tp (MoE parallel folding): etp x ep must divide tp x cp x dp
    (parallel_state.py: world % (expert_tp * ep * pp)), and with tp > 1 sequence parallel
    must be on (moe_layer.py refuses MoE with TP but no SP in training), so each dense TP
    rank routes its own tokens."""
    if s.etp is None or s.etp == s.tp:
        return
    if problem == "divides":
        n = s.tp * s.cp * s.dp
        raise ScenarioError.keyed(
            "etp", "scenario.etp_divides",
            "etp*ep = {etp}*{ep} must divide tp*cp*dp = {n}: the expert grid (etp x ep x "
            "expert dp) re-partitions the dense tp x cp x dp ranks (Megatron)",
            etp=s.etp, ep=s.ep, n=n,
        )  # fmt: skip
    if s.tp > 1 and not s.sequence_parallel:
        raise ScenarioError.keyed(
            "etp", "scenario.etp_sp",
            "etp different from tp needs sequence_parallel: each TP rank must route its own "
            "tokens to the expert grid (Megatron moe_layer.py)",
        )  # fmt: skip


def _check_hsdp(s: Scenario) -> None:
    """HSDP shards with FSDP (ZeRO-3) inside groups of dp_shard data-parallel ranks, which
    tile dp (torch FSDP2 fully_shard on a 2D mesh: (replicate, shard))."""
    if s.dp_shard is None:
        return
    if s.zero != 3:
        raise ScenarioError.keyed(
            "dp_shard", "scenario.dp_shard_zero3",
            "dp_shard (HSDP) shards parameters, gradients and optimizer state as FSDP does: "
            "it needs zero=3, got zero={zero}", zero=s.zero,
        )  # fmt: skip
    if s.dp % s.dp_shard:
        raise ScenarioError.keyed(
            "dp_shard", "scenario.dp_shard_divides",
            "dp_shard = {shard} must divide dp = {dp}: the shard groups tile the "
            "data-parallel ranks, dp/dp_shard replicas of one group", shard=s.dp_shard, dp=s.dp,
        )  # fmt: skip


def check_ulysses(s: Scenario, heads: int, kv_heads: int) -> None:
    """cp_comm=a2a gives each CP rank heads/(tp x cp) of the heads (DeepSpeed-Ulysses, Jacobs
    et al. 2023 §3.1; TransformerEngine asserts the heads divide by the CP size), so both the
    query and the key/value heads must split over tp x cp."""
    n = s.tp * s.cp
    if s.cp_comm == "a2a" and s.cp > 1 and (heads % n or kv_heads % n):
        raise ScenarioError.keyed(
            "cp_comm", "scenario.cp_ulysses",
            "cp_comm=a2a splits the heads over tp*cp = {n}: {heads} heads and {kv} KV heads "
            "must both divide by it; use cp_comm=p2p or allgather, or a smaller cp",
            n=n, heads=heads, kv=kv_heads,
        )  # fmt: skip


def check_sequence(s: Scenario, seq_len: int) -> None:
    """After the model is known: the sequence splits into 2 x cp equal causal chunks."""
    if s.cp > 1 and seq_len % (2 * s.cp):
        raise ScenarioError.keyed(
            "cp", "scenario.cp_chunks",
            "the sequence of {seq} tokens must split into 2*cp = {n} equal chunks (causal "
            "load balancing: CP rank i holds chunks i and 2*cp-1-i, Megatron/TransformerEngine)",
            seq=seq_len, n=2 * s.cp,
        )  # fmt: skip
