"""What one training step does, apart from the model and the mesh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
# FP8 recipes (Micikevicius et al. 2022, "FP8 formats for deep learning"): one scale per
# tensor (Transformer Engine DelayedScaling / Float8CurrentScaling, torchao "tensorwise"),
# per 1x128 activation and 128x128 weight block (DeepSeek-V3 tech report §3.3.1; TE
# Float8BlockScaling), or per 32 elements in hardware (OCP Microscaling spec v1.0, MXFP8).
FP8_RECIPES = ("none", "tensorwise", "blockwise", "mxfp8")
Fp8Recipe = Literal["none", "tensorwise", "blockwise", "mxfp8"]


@dataclass(frozen=True)
class Training:
    micro_batch_size: int = 1
    microbatches: int = 4
    dtype: Literal["bf16", "fp16", "fp32"] = "bf16"
    zero: int = 0
    recompute: Literal["none", "selective", "full"] = "none"
    sequence_parallel: bool = False
    forward_only: bool = False  # the seed's naive demo: no backward, no gradients, no update
    # Without SP, each TP rank sends 1/t of the stage boundary's activation and the receiving
    # stage all-gathers it over TP: Megatron-LM's scatter_gather_tensors_in_pipeline (default
    # on; megatron/p2p_communication.py; Narayanan et al. 2021 §4.1). Off: every TP rank
    # sends all of it (--no-scatter-gather-tensors-in-pipeline; torch.distributed.pipelining).
    pp_scatter_gather: bool = True
    # The vocabulary is padded to a multiple of this x tp (Megatron-LM's
    # --make-vocab-size-divisible-by, default 128); 1: no padding (torchtitan, Hugging Face).
    vocab_multiple: int = 128
    # Dao 2023 (FlashAttention-2): the s x s scores never reach HBM and causal blocks above
    # the diagonal are skipped. Off: Megatron 2021's explicit QK^T, softmax, AV kernels.
    flash_attention: bool = True
    # Which FlashAttention: "fa2" (Dao 2023) or "fa1", the 2022 kernel and the Triton port
    # MosaicML's llm-foundry ran (attn_impl "triton"), about half as fast (cost/compute.py).
    flash_kernel: Literal["fa2", "fa1"] = "fa2"
    overlap_grad_reduce: bool = False  # Megatron's --overlap-grad-reduce (DDP/FSDP buckets)
    overlap_param_gather: bool = False  # Megatron's --overlap-param-gather (ZeRO-3 prefetch)
    tp_comm_overlap: bool = False  # Megatron's --tp-comm-overlap (TE userbuffers)
    # Megatron-LM --recompute-method block --recompute-num-layers: under full recompute only
    # this many layers of each chunk are recomputed, the rest keep their activations; None: all.
    recompute_layers: int | None = None
    # Gradients reduced in fp32 whatever the weights' dtype (torchtitan's default
    # training.mixed_precision_reduce = "float32"; Megatron --accumulate-allreduce-grads-in-fp32).
    grad_reduce_fp32: bool = False
    # ZeRO-3 gathers each parameter tensor in its own collective (DeepSpeed ZeRO-3 partitions
    # every parameter: Rajbhandari et al. 2021, ZeRO-Infinity §6.1), not one flat buffer per
    # layer (FSDP's FlatParameter / FSDP2's per-block all-gather: Zhao et al. 2023 §3.2).
    zero3_per_tensor: bool = False
    # Gradients accumulated in an fp32 buffer that replaces the 16-bit .grad: Megatron-LM's
    # main_grad (arguments.py forces accumulate_allreduce_grads_in_fp32 with bf16; the grad
    # buffer of distributed/param_and_grad_buffer.py), nanotron's accumulate_grad_in_fp32.
    # Off: the 16-bit .grad only (torchtitan, Hugging Face). No effect on fp32 training.
    grad_accum_fp32: bool = True
    # fp32 master weights and Adam moments beside the 16-bit weights (Micikevicius et al. 2018
    # §3.1; Rajbhandari et al. 2020 §3's 12 bytes). Off: "pure" 16-bit training, the moments in
    # the weights' dtype and no master copy (LitGPT --precision bf16-true, torchtune dtype bf16).
    master_weights: bool = True
    # The loss on the logits: Megatron-LM's vocab-parallel cross-entropy upcasts once and
    # works in place (core/tensor_parallel/cross_entropy.py); off: logits.float() then
    # F.cross_entropy, which keeps the log-softmax and both gradients in fp32 (torchtitan, HF).
    fused_cross_entropy: bool = True
    # What recompute="selective" recomputes: "attention", Megatron's core attention
    # (Korthikanti et al. 2022 §4.2, --recompute-modules core_attn); "op", torchtitan's per-op
    # SAC (parallelize_llama.py _save_list: every other matmul's output and the attention
    # output kept, everything else recomputed). Memory only: the time side prices "selective".
    selective_ac: Literal["attention", "op"] = "attention"
    # SwiGLU as one fused function that keeps only its input, the gate and up halves, and
    # recomputes SiLU in the backward (Megatron-core fusions/fused_bias_swiglu.py, on by
    # default); off: eager F.silu(gate) * up, which also keeps SiLU(gate) and the product.
    fused_swiglu: bool = True
    # Dropout masks kept for the backward (Korthikanti et al. 2022 §4.1); None: the
    # architecture's default, GPT/BERT-style (GeLU) models with Megatron-LM's 0.1 and
    # gated-MLP (Llama-family) models without, as their reference code trains them.
    dropout: bool | None = None
    # Mixed precision by torch.autocast (fp32 weights, 16-bit matmuls): softmax and the norms
    # run in fp32 (torch docs, amp.html "CUDA Ops that can autocast to float32": softmax,
    # layer_norm), so their saved tensors are 4-byte (Hugging Face Trainer --fp16/--bf16).
    # Off: a 16-bit model end to end (Megatron-LM, torchtitan, LitGPT bf16-true).
    autocast: bool = False
    # ZeRO-2/3 gradient accumulation without a reduce-scatter per micro-batch: FSDP's no_sync()
    # (torch/distributed/fsdp/fully_sharded_data_parallel.py: "FSDP will accumulate the full
    # model gradients (instead of gradient shards) until the eventual sync"; Lightning's
    # no_backward_sync, as litgpt finetune/full.py uses it). Off: every backward reduces.
    unsharded_grad_accum: bool = False
    # Whether per-op SAC keeps the sequence-parallel reduce-scatter outputs: torchtitan's
    # _save_list names the native op from 7419d7138 (2024-04-10, "fix SAC to use the correct
    # reduce_scatter op"); before, it named the legacy c10d_functional op, which DTensor no
    # longer dispatched (pytorch #120370, native funcol by default), so none were kept.
    sac_saves_reduce_scatter: bool = True
    # RMSNorm written in eager PyTorch that upcasts (litgpt model.py RMSNorm: x.float(), then
    # x_normed.to(dtype) * weight): it keeps its input's fp32 copy and its 16-bit normalized
    # output for the weight's gradient, 6 bytes per element, where a fused norm keeps its input.
    eager_rmsnorm: bool = False
    # Context-parallel ranks: each holds seq/cp tokens of every micro-batch (Megatron-LM
    # --context-parallel-size; its memory side in cost/memory_activations.py).
    cp: int = 1
    # How CP ranks exchange attention's keys and values (Megatron-LM --cp-comm-type): "p2p",
    # K/V blocks passed round a ring under attention (TransformerEngine's default); "allgather",
    # K/V gathered before attention (Dubey et al. 2024 §3.3.2, Llama 3); "a2a", Q, K, V and
    # the output all-to-all between sequence and heads (Jacobs et al. 2023, DeepSpeed-Ulysses).
    cp_comm: Literal["p2p", "allgather", "a2a"] = "p2p"
    # The expert layers' tensor-parallel size (Megatron-LM --expert-tensor-parallel-size; MoE
    # parallel folding, Liu et al. 2025): None is tp, Megatron's default (expert_tp below).
    etp: int | None = None
    # HSDP (FSDP2's 2D mesh, torchtitan data_parallel_shard_degree x replicate_degree): ZeRO-3
    # shards over dp_shard data-parallel ranks (with their CP ranks) and the dp/dp_shard shard
    # groups hold replicas that all-reduce the gradient shards. None: one group, all of dp.
    dp_shard: int | None = None
    # The linear layers' GEMMs in FP8 (cost/fp8.py): "none" is 16-bit training as before.
    fp8: Fp8Recipe = "none"
    # Tensorwise scales from the amax history of past steps ("delayed", TE's DelayedScaling,
    # Megatron --fp8-recipe delayed) or from the tensor itself ("current": an amax pass
    # first; TE Float8CurrentScaling, Megatron --fp8-recipe tensorwise, torchao's dynamic).
    fp8_scaling: Literal["delayed", "current"] = "delayed"
    # FSDP / ZeRO-3 gathers the weights already cast to FP8 (torchao
    # enable_fsdp_float8_all_gather, Megatron --fp8-param-gather): 1 byte per parameter.
    fp8_param_gather: bool = False

    def expert_tp(self, tp: int) -> int:
        """The expert GEMMs' tensor-parallel split: etp, or the dense tp when not given."""
        return self.etp or tp

    @property
    def passes(self) -> int:
        """Layer passes per micro-batch: forward, backward, and full recompute's second forward."""
        if self.forward_only:
            return 1
        return 3 if self.recompute == "full" else 2

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def gather_bytes(self) -> int:
        """Bytes per parameter a ZeRO-3 weight gather moves: FP8 when it gathers FP8."""
        return 1 if self.fp8 != "none" and self.fp8_param_gather else self.element_bytes

    @property
    def grad_bytes(self) -> int:
        """Bytes per gradient element on the wire."""
        return 4 if self.grad_reduce_fp32 else self.element_bytes

    @property
    def accum_fp32(self) -> bool:
        """An fp32 gradient buffer apart from 16-bit gradients (never for fp32 training)."""
        return self.grad_accum_fp32 and self.element_bytes < 4

    @property
    def grads_sharded(self) -> bool:
        """Whether gradients stay sharded between micro-batches under ZeRO-2/3: not when
        they accumulate unsharded (no_sync) over more than one micro-batch."""
        return self.zero >= 2 and not (self.unsharded_grad_accum and self.microbatches > 1)

    def has_dropout(self, gated_mlp: bool) -> bool:
        return (not gated_mlp) if self.dropout is None else self.dropout

    def recomputed(self, n: int) -> int:
        """Layers of an ``n``-layer chunk that full recompute runs forward again (0 otherwise)."""
        if self.recompute != "full" or self.forward_only:
            return 0
        return n if self.recompute_layers is None else min(n, self.recompute_layers)

    def chunk_passes(self, n: int) -> float:
        """Layer passes per layer of an ``n``-layer chunk: ``passes`` with partial recompute."""
        if self.forward_only or n == 0:
            return self.passes
        return 2.0 + self.recomputed(n) / n
