"""What each framework does that a published memory row does not restate, read in that
framework's code (memory_board fills the row's scenario from it), and the Training fields a
framework version sets that no scenario field says (training_change)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from app.core.fidelity.memory_loader import MemoryRow


@dataclass(frozen=True)
class Framework:
    """What a framework does that a row does not restate, read in the framework's code."""

    fused_cross_entropy: bool
    grad_accum_fp32: bool | None  # None: from the row's grad_dtype ("fp32 main grads")
    flash_attention: bool  # when the row leaves it null
    stage: str  # which GPU the source logs: "max" over all, or the "last" pipeline rank
    dropout: bool  # hidden and attention dropout in training
    fused_swiglu: bool
    why: str
    # ZeRO-3 gradient accumulation under no_sync (Training.unsharded_grad_accum).
    no_sync_accum: bool = False
    # The framework's model class keeps the output layer apart from the embedding, whatever
    # the checkpoint ties (a tied model trains one more vocabulary-sized matrix).
    unties_head: bool = False
    # The model's RMSNorm is eager and upcasts to fp32 (Training.eager_rmsnorm).
    eager_rmsnorm: bool = False


FRAMEWORKS: Mapping[str, Framework] = MappingProxyType({
    # train.py: F.cross_entropy(pred.flatten(0, 1).float(), ...); FSDP2 keeps fp32 sharded
    # parameters and gradients, no separate accumulation buffer; SDPA flash attention; the
    # Llama model has no dropout and runs F.silu(w1(x)) * w3(x) eagerly;
    # benchmarks/llama3_h100_202412_torchtitan.md footnote 1: the maximum over all GPUs.
    "torchtitan": Framework(False, False, True, "max", False, False,
                            "unfused loss on .float() logits; no fp32 grad buffer; SDPA"),
    # torchtune TransformerDecoder returns self.output(h).float(): the loss is unfused.
    "torchtune": Framework(False, False, True, "max", False, False,
                           "unfused loss on .float() logits; eager SwiGLU"),
    # litgpt finetune/full.py: cross-entropy on the logits, no fp32 buffer (bf16-true), eager
    # LLaMAMLP (F.silu(fc_1(x)) * fc_2(x)), no dropout; rank 0 prints; its fit() accumulates
    # inside fabric.no_backward_sync(model, enabled=is_accumulating), FSDP's no_sync.
    # litgpt/model.py (84a73fd0, the Gemma row's commit): GPT builds lm_head = nn.Linear and
    # wte = nn.Embedding and never ties them; scripts/convert_hf_checkpoint.py copies a tied
    # checkpoint's embedding into lm_head.weight; finetune/full.py refuses tie_embeddings.
    # Its RMSNorm: x.float(), x * rsqrt(mean(x * x) + eps), .to(dtype), * weight (eager).
    "LitGPT (Lightning Fabric)": Framework(False, False, True, "max", False, False,
                                           "unfused loss; eager gated MLP; no dropout; "
                                           "no_sync accumulation; untied head",
                                           no_sync_accum=True, unties_head=True,
                                           eager_rmsnorm=True),
    # transformers Trainer: the model's CrossEntropyLoss; fp32 parameters under AMP, so fp32
    # gradients; eager attention (the rows' V100 has no flash kernels); BERT and GPT-2 train
    # with dropout 0.1 (hidden_dropout_prob, attention_probs_dropout_prob; resid/attn_pdrop).
    "HF Transformers Trainer": Framework(False, True, False, "max", True, False,
                                         "unfused loss; AMP keeps fp32 grads; eager attention"),
    "HF Accelerate": Framework(False, True, False, "max", True, False,
                               "unfused loss; eager attention; dropout 0.1"),
    # Megatron-LM: vocab_parallel_cross_entropy; main_grad fp32 with bf16 (arguments.py);
    # Transformer Engine's fused attention keeps no s x s scores; --hidden-dropout and
    # --attention-dropout default to 0.1; Megatron-core fuses SwiGLU (bias_swiglu_fusion),
    # the 2023 legacy model ran it eagerly; the CI golden values come from the last rank.
    "Megatron-LM": Framework(True, None, True, "last", True, True,
                             "vocab-parallel loss; main_grad per grad_dtype; TE attention"),
})  # fmt: skip
# torchtitan compiles its loss with training.compile except between e8977b0 (2024-12-18,
# "turning off compile on loss function") and bbb1b616e (2025-04-02, components/loss.py
# build_cross_entropy_loss): the rows' later commits, whose compiled loss never holds the
# fp32 log-softmax and its gradients; it is predicted as a fused loss.
LOSS_COMPILED = ("e7c0cae", "6fc499f")
# torchtrain before 7419d7138 (2024-04-10): its per-op SAC list named the legacy
# c10d_functional.reduce_scatter_tensor, which DTensor had stopped dispatching (pytorch
# #120370), so the sequence-parallel reduce-scatter outputs were recomputed, not kept.
SAC_LEGACY_RS = ("c233ecdd9",)


def training_change(row: MemoryRow) -> dict[str, Any]:
    """Training fields the row's framework (and its version) sets that no scenario field says."""
    change: dict[str, Any] = {}
    if row.framework_family == "torchtitan" and any(c in row.framework for c in SAC_LEGACY_RS):
        change["sac_saves_reduce_scatter"] = False
    fw = FRAMEWORKS.get(row.framework_family)
    if fw is not None and fw.eager_rmsnorm and row.model.norm == "RMSNorm":
        change["eager_rmsnorm"] = True
    return change
