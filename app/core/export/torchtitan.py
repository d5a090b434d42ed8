"""A scenario as a torchtitan TOML job config ([parallelism], [training],
[activation_checkpoint]), keys spelled as torchtitan v0.2.2's torchtitan/config/job_config.py
spells its dataclass fields (result.TORCHTITAN), or the reason torchtitan cannot run it."""

from __future__ import annotations

import json

from app.core.export.result import Cannot
from app.core.export.torch_names import torch_schedule
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario
from app.core.schedules import ScheduleName
from app.core.schedules.pipeline import Pipeline

# torchtitan/models/llama3/__init__.py (v0.2.2) flavors of the shapes meshscope presets hold.
FLAVORS = {"llama3-8b": ("llama3", "8B"), "llama3-70b": ("llama3", "70B"),
           "llama3-405b": ("llama3", "405B")}  # fmt: skip

Table = dict[str, object]


def _rotate(s: Scenario) -> str:
    """Parallelism.context_parallel_rotate_method: torch's ring attention exchanges K/V shards
    by "allgather" (all at once, its default) or "alltoall" (passed on round the ring, the p2p
    ring cost/durations.py prices); it has no head-sharded (Ulysses) attention."""
    if s.cp_comm == "a2a":
        raise Cannot("torchtitan_cp_a2a", "torchtitan's context parallelism is ring attention "
                     "(K/V all-gathered or rotated); it has no Ulysses all-to-all. Use "
                     "cp_comm=p2p or allgather")  # fmt: skip
    return "allgather" if s.cp_comm == "allgather" else "alltoall"


def _etp(s: Scenario) -> int:
    """job_config.py Parallelism.expert_tensor_parallel_degree, always written: v0.2.2's
    default is 1, not tp, so the scenario's etp (default tp) is spelled out. parallel_dims.py
    asserts "Currently we only support ETP=TP or ETP=1"."""
    etp = s.etp or s.tp
    if etp not in (1, s.tp):
        raise Cannot("torchtitan_etp", "torchtitan runs expert tensor parallelism only at "
                     "etp = tp or etp = 1 (parallel_dims.py); set etp to 1 or to tp",
                     tp=s.tp)  # fmt: skip
    return etp


def tables(s: Scenario, m: ModelSpec, p: Pipeline) -> tuple[dict[str, Table], list[str]]:
    """The TOML's tables in order, and notes; raises Cannot for what torchtitan cannot run."""
    notes: list[str] = []
    out: dict[str, Table] = {}
    if s.model in FLAVORS:
        name, flavor = FLAVORS[s.model]
        out["model"] = {"name": name, "flavor": flavor}
    else:
        notes.append(f"[model] left out: torchtitan has no flavor of {s.model}'s shape "
                     f"({m.layers} layers, dim {m.hidden}, {m.heads} heads)")  # fmt: skip
    out["training"] = _training(s, m)
    out["parallelism"] = _parallelism(s, m, p, notes)
    out["activation_checkpoint"] = _checkpoint(s, p, notes)
    if s.tp_comm_overlap and s.tp > 1:
        # job_config.py: async TP "currently only effective when compile is enabled".
        out["compile"] = {"enable": True}
    if s.fp8 != "none":
        converter, table = _fp8(s)
        out.setdefault("model", {})["converters"] = [converter]
        out[converter] = table
        notes.append("FP8: torchtitan's docs/float8.md asks for compile.enable to fuse the "
                     "casts; without it they run slower than priced here")  # fmt: skip
    return out, notes


def _fp8(s: Scenario) -> tuple[str, Table]:
    """The model converter and its table (job_config.py Float8Linear / MXLinear): torchao's
    Float8Linear scales tensorwise from each tensor (docs/float8.md: "tensorwise dynamic
    scaling"), MXLinear scales per 32 elements on Blackwell; there is no 1x128/128x128 one."""
    if s.fp8 == "blockwise":
        raise Cannot(
            "torchtitan_fp8_blockwise", "torchtitan's float8 recipes are tensorwise, rowwise "
            "and rowwise_with_gw_hp (job_config.py); it has no 1x128/128x128 blockwise "
            "scaling. Use fp8=tensorwise with fp8_scaling=current, or mxfp8",
        )  # fmt: skip
    if s.fp8 == "mxfp8":
        if s.fp8_param_gather:
            raise Cannot(
                "torchtitan_mx_gather", "torchtitan gathers MXFP8 weights in 16-bit: its FP8 "
                "all-gather is for tensorwise float8 only (docs/float8.md)",
            )  # fmt: skip
        return "quantize.linear.mx", {"recipe_name": "mxfp8_cublas"}
    if s.fp8_scaling == "delayed":
        raise Cannot("torchtitan_fp8_delayed", "torchtitan's float8 scales tensorwise from each "
                     "tensor (current scaling); delayed scaling from the amax history is "
                     "Transformer Engine's. Set fp8_scaling=current")  # fmt: skip
    table: Table = {"recipe_name": "tensorwise"}
    if s.fp8_param_gather:  # cast before FSDP's all-gather: 1 byte per parameter on the wire
        table |= {"enable_fsdp_float8_all_gather": True,
                  "precompute_float8_dynamic_scale_for_fsdp": True}  # fmt: skip
    return "quantize.linear.float8", table


def _training(s: Scenario, m: ModelSpec) -> Table:
    if s.dtype == "fp16":
        raise Cannot("torchtitan_fp16", "torchtitan trains in bfloat16 or float32, not fp16")
    # With PP the pipeline splits the local batch: pipeline micro-batches = local_batch_size //
    # pipeline_parallel_microbatch_size. Without, train.py accumulates gradients over
    # global // (local x dp) steps: one micro-batch each.
    local = s.micro_batch_size * (s.microbatches if s.pp > 1 else 1)
    global_batch = s.micro_batch_size * s.microbatches * s.dp
    out: Table = {"local_batch_size": local, "global_batch_size": global_batch,
                  "seq_len": m.seq_len}  # fmt: skip
    if s.dtype == "fp32":
        out["mixed_precision_param"] = "float32"
    elif not s.master_weights:  # job_config.py: dtype bfloat16 keeps no fp32 copy at all
        out["dtype"] = "bfloat16"
    return out


def _parallelism(s: Scenario, m: ModelSpec, p: Pipeline, notes: list[str]) -> Table:
    if s.zero == 1:
        raise Cannot(
            "torchtitan_zero", "torchtitan shards data parallelism with FSDP2 (parameters, "
            "gradients and optimizer state together) or replicates it (DDP); it has no "
            "optimizer-only sharding (ZeRO-1). Use zero=2, zero=3 or zero=0", zero=1,
        )  # fmt: skip
    if s.tp > 1 and not s.sequence_parallel:
        # torchtitan/models/llama3/infra/parallelize.py apply_tp: norms are SequenceParallel.
        raise Cannot(
            "torchtitan_no_sp",
            "torchtitan's tensor parallelism always splits the "
            "norms along the sequence (SequenceParallel); it has no TP without SP",
        )
    # HSDP: FSDP2 over dp_shard ranks, replicated over the rest (job_config.py Parallelism).
    shard = (s.dp_shard or s.dp) if s.zero >= 2 else 1
    out: Table = {
        "data_parallel_replicate_degree": s.dp // shard,
        "data_parallel_shard_degree": shard,
    }
    if shard > 1:
        # fully_shard's reshard_after_forward: False keeps the gathered parameters from the
        # forward to the backward (ZeRO-2's one gather a step: torch's FSDP1 names the same
        # thing SHARD_GRAD_OP); True frees them and gathers again in the backward (ZeRO-3).
        out["fsdp_reshard_after_forward"] = "never" if s.zero == 2 else "always"
    out |= {"tensor_parallel_degree": s.tp, "pipeline_parallel_degree": s.pp}
    if s.cp > 1:  # job_config.py Parallelism.context_parallel_degree
        out["context_parallel_degree"] = s.cp
        out["context_parallel_rotate_method"] = _rotate(s)
    if s.ep > 1 and m.experts:  # job_config.py Parallelism.expert_parallel_degree
        out["expert_parallel_degree"] = s.ep
        out["expert_tensor_parallel_degree"] = _etp(s)
    elif m.experts and (s.etp or s.tp) != s.tp:  # job_config.py: "No effect ... when ep = 1"
        raise Cannot(
            "torchtitan_etp_ep1",
            "torchtitan applies expert_tensor_parallel_degree "
            "only with ep > 1: at ep = 1 its experts split over tp; set etp to tp",
        )
    if s.tp_comm_overlap and s.tp > 1:
        out["enable_async_tensor_parallel"] = True
    if s.pp == 1 and p.chunks > 1:
        notes.append("pp = 1: torchtitan does not pipeline, so the chunks run as one model")
    if s.pp > 1:
        out["pipeline_parallel_schedule"] = torch_schedule(s.schedule, "torchtitan")
        if s.schedule == ScheduleName.one_f_one_b and s.microbatches < s.pp:
            # torch 2.13 Schedule1F1B.__init__: "Number of microbatches ... must be greater
            # than or equal to the number of stages".
            raise Cannot.keyed(
                "torchtitan_1f1b_m", "torch's Schedule1F1B needs microbatches >= pp ({pp}), "
                "got {m}", pp=s.pp, m=s.microbatches,
            )  # fmt: skip
        out["pipeline_parallel_microbatch_size"] = s.micro_batch_size
        out["module_fqns_per_model_part"] = model_parts(p.split)
    if s.zero >= 2 and not s.overlap_param_gather:
        notes.append("FSDP2 always prefetches its all-gathers: overlap_param_gather is on")
    return out


def model_parts(split: tuple[int, ...]) -> list[list[str]]:
    """Each virtual stage's modules in model order, as torchtitan's llama3 names them
    (tok_embeddings, layers.<i>, norm, output): the split exactly, uneven or not."""
    parts, first = [], 0
    for n in split:
        parts.append([f"layers.{i}" for i in range(first, first + n)])
        first += n
    parts[0].insert(0, "tok_embeddings")
    parts[-1] += ["norm", "output"]
    return parts


def _checkpoint(s: Scenario, p: Pipeline, notes: list[str]) -> Table:
    if s.recompute == "none":
        return {"mode": "none"}
    if s.recompute == "selective":
        if s.selective_ac == "op":
            return {"mode": "selective", "selective_ac_option": "op"}
        notes.append(
            "selective attention recompute: torchtitan's SDPA keeps no s x s scores, "
            "which is all that core-attention recompute drops, so no AC is set"
        )
        return {"mode": "none"}
    per_chunk = max(max(row) for row in p.layers)
    if s.recompute_layers is not None and s.recompute_layers < per_chunk:
        raise Cannot.keyed(
            "torchtitan_recompute_layers", "torchtitan recomputes every layer (full) or every "
            "n-th layer, not the first {n} of each chunk", n=s.recompute_layers,
        )  # fmt: skip
    return {"mode": "full"}


def render(tabs: dict[str, Table]) -> str:
    """TOML: strings, numbers, booleans and lists of string lists are all these tables hold
    (JSON spells those as TOML does)."""
    blocks = []
    for name, table in tabs.items():
        lines = [f"[{name}]"]
        for key, value in table.items():
            if isinstance(value, list) and value and isinstance(value[0], list):
                rows = ",\n".join("  " + json.dumps(row) for row in value)
                lines.append(f"{key} = [\n{rows},\n]")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
