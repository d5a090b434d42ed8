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

    @property
    def passes(self) -> int:
        """Layer passes per micro-batch: forward, backward, and full recompute's second forward."""
        if self.forward_only:
            return 1
        return 3 if self.recompute == "full" else 2

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]
