"""A scenario as Megatron-LM pretrain_gpt.py flags, spelled as Megatron-LM core_v0.15.3's
megatron/training/arguments.py spells them (result.MEGATRON), or the reason it cannot run it.

Megatron runs two pipeline schedules: 1F1B (forward_backward_pipelining_without_interleaving)
and interleaved 1F1B (..._with_interleaving), megatron/core/pipeline_parallel/schedules.py.
"""

from __future__ import annotations

import shlex

from app.core.export.megatron_moe import cp_flags, mla_flags, moe_flags
from app.core.export.result import Cannot
from app.core.inputs.models import ModelSpec
from app.core.inputs.scenario import Scenario
from app.core.schedules import ScheduleName, interleaved_rounds
from app.core.schedules.pipeline import Pipeline

Flag = tuple[str, object]  # (flag, value); value None: a switch
_INTERLEAVED = ScheduleName.interleaved


def flags(s: Scenario, m: ModelSpec, p: Pipeline) -> tuple[list[Flag], list[str]]:
    """(flags in order, notes); raises Cannot for what Megatron cannot run."""
    notes: list[str] = []
    out: list[Flag] = [
        ("--tensor-model-parallel-size", s.tp),
        ("--pipeline-model-parallel-size", s.pp),
    ]
    out += cp_flags(s)  # arguments.py; the sequence splits into 2*cp chunks (scenario check)
    out += _pipeline(s, p)
    out += [
        ("--micro-batch-size", s.micro_batch_size),
        # arguments.py: global = micro x data-parallel size x micro-batches per step.
        ("--global-batch-size", s.micro_batch_size * s.microbatches * s.dp),
    ]
    if s.tp > 1 and s.sequence_parallel:
        out.append(("--sequence-parallel", None))
    if s.tp_comm_overlap and s.tp > 1:
        if not s.sequence_parallel:  # arguments.py asserts tp_comm_overlap needs SP
            raise Cannot("megatron_tp_overlap_sp", "Megatron overlaps TP communication only "
                         "with --sequence-parallel (arguments.py asserts it)")  # fmt: skip
        out.append(("--tp-comm-overlap", None))
    out += _recompute(s)
    out += _data_parallel(s, notes)
    out += _dtype(s)
    out += _fp8(s)
    out += model_flags(m, s)
    return out, notes


def _pipeline(s: Scenario, p: Pipeline) -> list[Flag]:
    name = s.schedule
    if s.pp == 1 and p.chunks == 1 and name != ScheduleName.naive:
        return []  # one stage: forward_backward_no_pipelining, no schedule to choose
    if name not in (ScheduleName.one_f_one_b, _INTERLEAVED):
        raise Cannot.keyed(
            "megatron_schedule",
            "Megatron-LM runs 1F1B and interleaved 1F1B only, not {schedule}",
            schedule=name.value,
        )
    out: list[Flag] = []
    if name == _INTERLEAVED and s.pp == 1:  # arguments.py asserts pp > 1 with virtual stages
        raise Cannot("megatron_interleaved_pp", "Megatron interleaves chunks only with pp > 1")
    if name == _INTERLEAVED:
        if s.microbatches < s.pp:  # schedules.py: the group size must lie in [pp, m]
            raise Cannot.keyed(
                "megatron_interleaved_m",
                "Megatron's interleaved schedule needs microbatches >= pp ({pp}), got {m}",
                pp=s.pp, m=s.microbatches,
            )  # fmt: skip
        # torch's (and meshscope's) rounds of m // max(1, m // p) micro-batches per chunk are
        # Megatron's microbatch_group_size_per_vp_stage (default pp).
        group = s.microbatches // interleaved_rounds(s.pp, s.microbatches)
        if group != s.pp:
            out.append(("--microbatch-group-size-per-virtual-pipeline-stage", group))
    return _split(p, out)


def _split(p: Pipeline, out: list[Flag]) -> list[Flag]:
    """The layer split: Megatron's even default, first/last stage counts, or a full layout."""
    per_rank = [set(row) for row in p.layers]
    even = all(len(r) == 1 for r in per_rank)
    vpp = [("--num-virtual-stages-per-pipeline-rank", p.chunks)] if p.chunks > 1 else []
    if not even:
        return out + [("--pipeline-model-parallel-layout", layout(p.split))]
    counts = [sum(row) for row in p.layers]  # layers per pipeline rank, all its chunks
    middle = set(counts[1:-1])
    if len(set(counts)) == 1:
        return out + vpp
    if len(middle) <= 1:
        # transformer_block.get_num_layers_to_build: first/last given, the rest split evenly
        mid = middle.pop() if middle else None
        ends = [("--decoder-first-pipeline-num-layers", counts[0])] if counts[0] != mid else []
        if counts[-1] != mid:
            ends.append(("--decoder-last-pipeline-num-layers", counts[-1]))
        return out + vpp + ends
    return out + [("--pipeline-model-parallel-layout", layout(p.split))]


def layout(split: tuple[int, ...]) -> str:
    """--pipeline-model-parallel-layout: stages in model order split by '|', E the embedding,
    L the loss, t*n n decoder layers (pipeline_parallel_layer_layout.parse_str_to_list)."""
    stages = [f"t*{n}" for n in split]
    stages[0], stages[-1] = "E" + stages[0], stages[-1] + "L"
    return "|".join(stages) if len(stages) > 1 else f"Et*{split[0]}L"


def _recompute(s: Scenario) -> list[Flag]:
    if s.recompute == "none":
        return []
    if s.recompute == "selective":
        if s.selective_ac == "op":
            raise Cannot("megatron_selective_op", "Megatron's selective recompute picks "
                         "modules (--recompute-modules core_attn, mlp, ...), not torchtitan's "
                         "per-op policy")  # fmt: skip
        # --recompute-modules defaults to core_attn: the attention scores and softmax.
        return [("--recompute-granularity", "selective")]
    flags = [("--recompute-granularity", "full")]
    if s.recompute_layers is None:  # every layer: one layer per uniform recompute unit
        return flags + [("--recompute-method", "uniform"), ("--recompute-num-layers", 1)]
    return flags + [("--recompute-method", "block"), ("--recompute-num-layers", s.recompute_layers)]


def _data_parallel(s: Scenario, notes: list[str]) -> list[Flag]:
    out: list[Flag] = []
    if s.dp_shard not in (None, s.dp):
        raise Cannot("megatron_hsdp", "HSDP (dp_shard below dp) is exported for torchtitan "
                     "(data_parallel_shard_degree x replicate_degree); this export does not "
                     "spell Megatron-FSDP's hybrid sharding")  # fmt: skip
    if s.zero == 1:
        out.append(("--use-distributed-optimizer", None))
    elif s.zero >= 2:
        if s.pp > 1:
            raise Cannot.keyed(
                "megatron_fsdp_pp",
                "ZeRO-{zero} in Megatron-LM is Megatron-FSDP, which core_v0.15.3 neither "
                "documents nor tests with pipeline parallelism; use zero=1 (the distributed "
                "optimizer) with pp > 1", zero=s.zero,
            )  # fmt: skip
        strategy = "optim_grads" if s.zero == 2 else "optim_grads_params"
        out += [("--use-megatron-fsdp", None), ("--data-parallel-sharding-strategy", strategy),
                ("--ckpt-format", "fsdp_dtensor")]  # fmt: skip  # arguments.py asserts it
    if s.overlap_grad_reduce and s.dp > 1:
        out.append(("--overlap-grad-reduce", None))
    if s.overlap_param_gather and s.dp > 1:
        if s.zero == 0:
            notes.append("overlap_param_gather left out: without ZeRO no parameters are gathered")
        elif not s.overlap_grad_reduce:
            raise Cannot("megatron_param_gather", "Megatron's --overlap-param-gather needs "
                         "--overlap-grad-reduce (arguments.py asserts it)")  # fmt: skip
        else:
            out.append(("--overlap-param-gather", None))
    return out


def _dtype(s: Scenario) -> list[Flag]:
    return {"bf16": [("--bf16", None)], "fp16": [("--fp16", None)]}.get(s.dtype, [])


# meshscope's FP8 recipe -> arguments.py's --fp8-recipe: tensorwise with delayed scaling is
# "delayed" (TE DelayedScaling), with current scaling "tensorwise" (Float8CurrentScaling).
_FP8_RECIPE = {("tensorwise", "delayed"): "delayed", ("tensorwise", "current"): "tensorwise"}


def _fp8(s: Scenario) -> list[Flag]:
    """--fp8-format and --fp8-recipe (arguments.py _add_transformer_engine_args): hybrid (E4M3
    forward, E5M2 gradients) for tensorwise scales; E4M3 everywhere for blockwise (DeepSeek-V3
    §3.3.2) and MXFP8 (TE MXFP8BlockScaling's format)."""
    if s.fp8 == "none":
        return []
    recipe = _FP8_RECIPE.get((s.fp8, s.fp8_scaling), s.fp8)
    fmt = "hybrid" if s.fp8 == "tensorwise" else "e4m3"
    out: list[Flag] = [("--fp8-format", fmt), ("--fp8-recipe", recipe)]
    if s.fp8_param_gather:
        if s.zero == 0:  # arguments.py asserts it
            raise Cannot("megatron_fp8_param_gather", "Megatron's --fp8-param-gather needs "
                         "the distributed optimizer or FSDP (zero >= 1)")  # fmt: skip
        out.append(("--fp8-param-gather", None))
    return out


def model_flags(m: ModelSpec, s: Scenario) -> list[Flag]:
    """The model's shape; the vocabulary itself comes from the tokenizer in Megatron."""
    out: list[Flag] = [
        ("--num-layers", m.layers),
        ("--hidden-size", m.hidden),
        ("--num-attention-heads", m.heads),
        ("--ffn-hidden-size", m.ffn_hidden),
        ("--seq-length", m.seq_len),
        ("--max-position-embeddings", m.seq_len),
    ]
    if m.kv_heads and m.kv_heads != m.heads:
        out += [("--group-query-attention", None), ("--num-query-groups", m.kv_heads)]
    if m.gated_mlp:
        out.append(("--swiglu", None))
    if not m.tied_embeddings:
        out.append(("--untie-embeddings-and-output-weights", None))
    if not m.learned_positions:
        out.append(("--position-embedding-type", "rope"))
    if s.vocab_multiple != 128:  # arguments.py's default
        out.append(("--make-vocab-size-divisible-by", s.vocab_multiple))
    if s.fused_cross_entropy:
        out.append(("--cross-entropy-loss-fusion", None))
    return out + mla_flags(m) + moe_flags(m, s)


def render(flag_list: list[Flag]) -> str:
    """One flag per line, continued with a backslash, as a shell command's arguments."""
    # shlex.quote: a layout holds '|' and '*', which a shell would read as a pipe and a glob.
    lines = [f if v is None else f"{f} {shlex.quote(str(v))}" for f, v in flag_list]
    return " \\\n".join(lines)
