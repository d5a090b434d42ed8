"""Memory that is not model state or kept activations: the loss's fp32 transients on the
head's rank, ZeRO-3's gathered weights, the caching allocator's fragmentation and the
per-process floor (CUDA context, NCCL buffers) outside it."""

from __future__ import annotations

from app.core.inputs.hardware import HardwareSpec
from app.core.inputs.models import ModelSpec
from app.core.inputs.training import Training

GIB = 1 << 30

# GMLake (Guo et al., ASPLOS 2024, arXiv 2401.08156) abstract: with the memory-reduction
# techniques of LLM fine-tuning (ZeRO-style sharding, recompute, LoRA; eight LLMs on
# A100-80GB) PyTorch's caching allocator leaves on average 15% (up to 33%) of what it
# reserves fragmented. The irregular pattern is ZeRO-3's: every layer's weights gathered
# into fresh blocks on another stream and freed after use (Zhao et al. 2023, PyTorch FSDP
# §3.4: the caching allocator cannot reuse such blocks across streams at once). Without
# parameter gathering the pattern repeats step after step and the pool fits it (PyTorch
# CUDA semantics notes: blocks are only rounded up, to 512 B and 2 MiB).
FRAGMENTATION = 0.15


def logits_transient_bytes(m: ModelSpec, t: Training, tp: int) -> float:
    """The head rank's peak for one micro-batch's loss, bytes per GPU: the final norm's and
    the output layer's inputs (Korthikanti et al. 2022 §4.3, 2sbh each, /t under SP) and the
    logits' transients, sbV/t elements each (vocabulary-parallel under TP):
      fused (Megatron-LM core/tensor_parallel/cross_entropy.py): the 16-bit logits and their
        fp32 copy, which exp, the sum's division and the backward then reuse in place: 4 + e
        bytes per element at the forward's and at the backward's peak (4 when already fp32);
      unfused (logits.float() then F.cross_entropy, as torchtitan and Hugging Face do): the
        backward holds the fp32 log-softmax output, its gradient and the input gradient at
        once, 3 x 4 = 12 bytes per element (aten log_softmax_backward_data); under TP,
        PyTorch's loss_parallel (torch/distributed/tensor/parallel/loss.py,
        _nll_loss_and_log_softmax_backward: (grad_input + exp(x)) * grad_output with
        grad_input = zeros_like(x)) holds four, 16 bytes per element."""
    # Under CP each rank holds the logits of its own s/cp positions (shapes.rank_seq).
    s, b, h, e = m.seq_len // t.cp, t.micro_batch_size, m.hidden, t.element_bytes
    logits = s * b * m.vocab / tp
    unfused = 16.0 if tp > 1 else 12.0
    per = 4.0 + (e if e < 4 else 0.0) if t.fused_cross_entropy else unfused
    inputs = 2.0 * s * b * h * e / (tp if t.sequence_parallel else 1)
    return logits * per + inputs


def gather_bytes(unit_params: int, rank_params: int, t: Training, dp: int) -> float:
    """ZeRO-3's gathered 16-bit weights: the unit running and the one prefetched (Zhao et al.
    2023, PyTorch FSDP §3.3: forward and backward prefetch issue the next all-gather before
    the current unit's compute, so two units are unsharded at once), ``unit_params`` the
    rank's largest unit (a layer, the embedding or the head: FSDP wraps each). Only the
    shards other ranks own count: the rank's own 1/dp is in its weights already."""
    if t.zero < 3 or dp == 1:
        return 0.0
    units = min(2 * unit_params, rank_params)
    return units * t.element_bytes * (1.0 - 1.0 / dp)


def root_grads_bytes(root_params: int, t: Training, dp: int) -> float:
    """ZeRO-2/3's root unit at the backward's end, bytes per GPU: FSDP wraps each layer and
    leaves the embedding and the head in the root unit (torchtitan apply_fsdp at 9dec370:
    fully_shard per block, then fully_shard(model); Lightning FSDPStrategy
    auto_wrap_policy={Block}, litgpt finetune/full.py), whose gradients are reduce-scattered
    only once its last parameter, the embedding, has one. Then the root's unsharded 16-bit
    gradients and their reduce-scatter input exist at once: e + (4 when reduced in fp32, else
    e) bytes per parameter (FSDP2 _fsdp_collectives.py foreach_reduce copies them into the
    reduce-scatter buffer; FSDP1 flat parameters: SplitWithSizesBackward cats them into the
    flat gradient). SHARD_GRAD_OP (ZeRO-2) reduces by the same units; DeepSpeed's per-tensor
    ZeRO-3 reduces each tensor in buckets instead."""
    if t.zero < 2 or dp == 1 or t.zero3_per_tensor:
        return 0.0
    return root_params * (t.element_bytes + t.grad_bytes)


def fragmentation_bytes(allocated: float, t: Training, dp: int) -> float:
    """What the caching allocator reserves beyond the peak of live tensors: FRAGMENTATION of
    the reserved pool where ZeRO-3 gathers parameters, reserved = allocated / (1 - 0.15)."""
    if t.zero < 3 or dp == 1:
        return 0.0
    return allocated * FRAGMENTATION / (1.0 - FRAGMENTATION)


def floor_bytes(hw: HardwareSpec | None) -> float:
    """The per-process floor outside the caching allocator (HardwareSpec.memory_floor_gib)."""
    return 0.0 if hw is None else hw.memory_floor_gib * GIB
