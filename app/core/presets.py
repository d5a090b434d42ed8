"""Named models and hardware. Frozen specs; the dicts are constants, never mutated."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class ModelSpec:
    name: str
    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    ffn_hidden: int
    gated_mlp: bool = False  # SwiGLU: three h x ffn matrices instead of two
    kv_heads: int | None = None  # grouped-query attention; None = heads
    tied_embeddings: bool = True  # GPT/Megatron tie the output head to the embedding
    learned_positions: bool = True  # GPT-style position table (s x h); RoPE models have none

    @property
    def kv_dim(self) -> int:
        return self.hidden * (self.kv_heads or self.heads) // self.heads


def _gpt(name: str, layers: int, hidden: int, heads: int, seq: int = 2048) -> ModelSpec:
    # Megatron GPT: vocab 51,200, seq 2,048, ffn 4h (Narayanan et al. 2021 §5.1, Table 1).
    return ModelSpec(name, layers, hidden, heads, seq, 51_200, 4 * hidden)


def _llama(name: str, layers: int, hidden: int, heads: int, ffn: int) -> ModelSpec:
    # Llama 3 (Dubey et al. 2024 Table 3): GQA with 8 KV heads, SwiGLU, vocab 128,256, RoPE.
    return ModelSpec(
        name, layers, hidden, heads, 8192, 128_256, ffn, gated_mlp=True, kv_heads=8,
        tied_embeddings=False, learned_positions=False,
    )  # fmt: skip


MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType(
    {
        "tiny": ModelSpec("tiny", 8, 128, 4, 128, 512, 512),
        # Brown et al. 2020 Table 2.1: GPT-3 175B.
        "gpt3-175b": _gpt("gpt3-175b", 96, 12288, 96),
        "llama3-8b": _llama("llama3-8b", 32, 4096, 32, 14336),
        "llama3-70b": _llama("llama3-70b", 80, 8192, 64, 28672),
        "llama3-405b": _llama("llama3-405b", 126, 16384, 128, 53248),
        # Narayanan et al. 2021 Table 1 (layers, hidden, heads).
        "megatron-1.7b": _gpt("megatron-1.7b", 24, 2304, 24),
        "megatron-3.6b": _gpt("megatron-3.6b", 30, 3072, 32),
        "megatron-7.5b": _gpt("megatron-7.5b", 36, 4096, 32),
        "megatron-18b": _gpt("megatron-18b", 40, 6144, 48),
        # Korthikanti et al. 2022 Table 3: the 22B model (48 layers, h 6144, 64 heads).
        "megatron-22b": _gpt("megatron-22b", 48, 6144, 64),
        "megatron-39b": _gpt("megatron-39b", 48, 8192, 64),
        "megatron-76b": _gpt("megatron-76b", 60, 10240, 80),
        "megatron-145b": _gpt("megatron-145b", 80, 12288, 96),
        "megatron-310b": _gpt("megatron-310b", 96, 16384, 128),
        "megatron-530b": _gpt("megatron-530b", 105, 20480, 128),
        "megatron-1t": _gpt("megatron-1t", 128, 25600, 160),
    }
)


@dataclass(frozen=True)
class HardwareSpec:
    name: str
    peak_tflops: float  # dense bf16 tensor-core peak per GPU
    hbm_gib: float
    hbm_tbps: float  # HBM bandwidth, TB/s
    intra_gbps: float  # per-GPU NVLink bandwidth inside a node, GB/s one direction
    inter_gbps: float  # per-GPU network bandwidth between nodes, GB/s one direction
    gpus_per_node: int = 8


HARDWARE: MappingProxyType[str, HardwareSpec] = MappingProxyType(
    {
        # NVIDIA A100 datasheet: 312 TFLOP/s bf16, 2.0 TB/s, NVLink3 600 GB/s bidirectional;
        # one 200 Gb/s HDR InfiniBand NIC per GPU (DGX A100).
        "a100-80g": HardwareSpec("a100-80g", 312.0, 80.0, 2.0, 300.0, 25.0),
        # NVIDIA H100 SXM datasheet: 989 TFLOP/s bf16 dense, 3.35 TB/s, NVLink4 900 GB/s
        # bidirectional; one 400 Gb/s NDR NIC per GPU (DGX H100).
        "h100-sxm": HardwareSpec("h100-sxm", 989.0, 80.0, 3.35, 450.0, 50.0),
        # NVIDIA H200 datasheet: H100's compute with 141 GB HBM3e at 4.8 TB/s.
        "h200": HardwareSpec("h200", 989.0, 141.0, 4.8, 450.0, 50.0),
    }
)
