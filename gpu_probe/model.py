"""A tiny GPT split into pipeline chunks, with Megatron-style TP inside each block.

The whole model is ``embedding -> L blocks -> final LayerNorm -> head``; pipeline parallelism
cuts the blocks into ``pp * chunks`` equal chunks (virtual stages, app.core.schedules'
numbering), the first chunk also holding the embeddings and the last the head. Parameter
names are the unsharded model's (``blocks.3.fc1.weight``) on every layout, and each weight is
initialised from its full tensor, drawn from a generator keyed by (seed, name), then sliced to
this rank's TP shard. So any DP x TP x PP layout starts from exactly the weights of the
single-process reference, which is the same code with ``tp = 1`` and one chunk.
"""

from __future__ import annotations

import math
import zlib

import torch
import torch.nn.functional as F
from torch import nn

from gpu_probe.config import ModelConfig
from gpu_probe.tensor_parallel import ShardedLinear, TPComm, copy_to_tp, reduce_from_tp


class Block(nn.Module):
    """Pre-LN transformer block; attention heads and MLP columns split over TP ranks."""

    def __init__(self, m: ModelConfig, comm: TPComm) -> None:
        super().__init__()
        d, tp = m.hidden, comm.size
        self.comm = comm
        self.local_heads, self.head_dim = m.heads // tp, d // m.heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.wq, self.wk, self.wv = (ShardedLinear(d, d, 0, tp) for _ in range(3))
        self.wo = ShardedLinear(d, d, 1, tp)
        self.fc1 = ShardedLinear(d, 4 * d, 0, tp)
        self.fc2 = ShardedLinear(4 * d, d, 1, tp)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        b, s, _ = h.shape
        a = copy_to_tp(self.ln1(h), self.comm)
        q, k, v = (self._split_heads(w(a), b, s) for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, s, self.local_heads * self.head_dim)
        h = h + reduce_from_tp(self.wo(y), self.comm)
        u = F.gelu(self.fc1(copy_to_tp(self.ln2(h), self.comm)))
        return h + reduce_from_tp(self.fc2(u), self.comm)

    def _split_heads(self, x: torch.Tensor, b: int, s: int) -> torch.Tensor:
        return x.view(b, s, self.local_heads, self.head_dim).transpose(1, 2)


class GPTChunk(nn.Module):
    """Virtual stage ``vstage`` of ``nvstages``: tokens -> hidden (first), hidden -> hidden,
    or hidden -> logits (last). One chunk with ``nvstages = 1`` is the whole model."""

    def __init__(self, m: ModelConfig, vstage: int, nvstages: int, comm: TPComm) -> None:
        super().__init__()
        per_chunk = m.layers // nvstages
        self.vstage, self.is_first, self.is_last = vstage, vstage == 0, vstage == nvstages - 1
        if self.is_first:
            self.tok_emb = nn.Embedding(m.vocab, m.hidden)
            self.pos_emb = nn.Embedding(m.seq_len, m.hidden)
        first = vstage * per_chunk
        ids = range(first, first + per_chunk)  # global block numbers: names match the reference
        self.blocks = nn.ModuleDict({str(i): Block(m, comm) for i in ids})
        if self.is_last:
            self.ln_f = nn.LayerNorm(m.hidden)
            self.head = nn.Linear(m.hidden, m.vocab, bias=False)  # replicated over TP

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.is_first:
            positions = torch.arange(x.shape[1], device=x.device)
            x = self.tok_emb(x) + self.pos_emb(positions)
        for block in self.blocks.values():
            x = block(x)
        return self.head(self.ln_f(x)) if self.is_last else x


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy, computed in fp32 whatever the compute dtype."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def shard_dims(module: nn.Module) -> dict[str, int | None]:
    """Parameter name -> the dim it is split along over TP (None: replicated)."""
    dims: dict[str, int | None] = {}
    for mod_name, mod in module.named_modules():
        for p_name, _ in mod.named_parameters(recurse=False):
            name = f"{mod_name}.{p_name}" if mod_name else p_name
            dims[name] = mod.shard_dim if isinstance(mod, ShardedLinear) else None
    return dims


@torch.no_grad()
def init_parameters(module: nn.Module, m: ModelConfig, seed: int, tp: int, tp_rank: int) -> None:
    """Fill each parameter with its TP shard of the full tensor drawn for (seed, name)."""
    for mod_name, mod in module.named_modules():
        for p_name, param in mod.named_parameters(recurse=False):
            name = f"{mod_name}.{p_name}" if mod_name else p_name
            full_shape = mod.full_shape if isinstance(mod, ShardedLinear) else param.shape
            full = _full_init(name, mod, tuple(full_shape), m, seed)
            if isinstance(mod, ShardedLinear):
                full = full.chunk(tp, dim=mod.shard_dim)[tp_rank]
            param.copy_(full)


def _full_init(name: str, mod: nn.Module, shape: tuple, m: ModelConfig, seed: int) -> torch.Tensor:
    if isinstance(mod, nn.LayerNorm):
        return torch.ones(shape) if name.endswith("weight") else torch.zeros(shape)
    gen = torch.Generator().manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % 2**62)
    std = 0.02
    if name.endswith(("wo.weight", "fc2.weight")):
        std /= math.sqrt(2 * m.layers)  # GPT-2: scale residual projections by 1/sqrt(2L)
    return torch.empty(shape).normal_(0.0, std, generator=gen)
