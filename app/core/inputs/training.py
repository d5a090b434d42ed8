"""What one training step does, apart from the model and the mesh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


@dataclass(frozen=True)
class Training:
    micro_batch_size: int = 1
    microbatches: int = 4
    dtype: Literal["bf16", "fp16", "fp32"] = "bf16"
    zero: int = 0
    recompute: Literal["none", "selective", "full"] = "none"
    sequence_parallel: bool = False
    forward_only: bool = False  # the seed's naive demo: no backward, no gradients, no update
    # Dao 2023 (FlashAttention-2): the s x s scores never reach HBM and causal blocks above
    # the diagonal are skipped. Off: Megatron 2021's explicit QK^T, softmax, AV kernels.
    flash_attention: bool = True
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
    def grad_bytes(self) -> int:
        """Bytes per gradient element on the wire."""
        return 4 if self.grad_reduce_fp32 else self.element_bytes

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
