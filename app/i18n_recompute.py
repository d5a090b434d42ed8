"""Strings of the partial-recompute and sharded-data-parallel controls, in English and Chinese."""

from __future__ import annotations

RECOMPUTE: dict[str, tuple[str, str]] = {
    "field.recompute_layers": (
        "layers recomputed per chunk (full recompute)",
        "每个分块重计算的层数（完全重计算）",
    ),
    "field.grad_reduce_fp32": ("reduce gradients in fp32", "梯度以 fp32 归约"),
    "field.zero3_per_tensor": (
        "ZeRO-3: one gather per parameter tensor",
        "ZeRO-3：每个参数张量单独收集",
    ),
}
