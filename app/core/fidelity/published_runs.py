"""Published, measured large-model training runs: a validation set for the cost model.

Pure data, standard library only. Every row is a figure the source reports as measured on real
hardware (iteration time, tokens/s, TFLOP/s per GPU or MFU), never a projection. Fields the
source does not state are ``None`` (or ``"unknown"`` for strings); nothing is filled in from
memory. ``verified`` is True when the figure was read in the source text (a transcription of
the paper, or the framework's own repository file) during this survey; ``caveat`` says what is
inferred, derived or read off a table with ambiguities. See docs/published_runs.md for the
table and how each figure converts to a step time.

Throughput fields hold the source's numbers exactly as published, in the source's units:
``tokens_per_s`` is the aggregate over all GPUs, ``tokens_per_s_per_gpu`` is per GPU,
``aggregate_pflops`` is the whole job. Percentages are stored as fractions (41% -> 0.41).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    """A dense decoder-only transformer as the source (or ``arch_source``) describes it."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None  # None = multi-head attention (kv heads = heads)
    ffn_hidden: int
    vocab: int
    seq_len: int
    gated_mlp: bool  # SwiGLU (three h x ffn matrices) rather than a two-matrix GeLU MLP
    arch_source: str  # where these numbers come from


@dataclass(frozen=True, kw_only=True)
class PublishedRun:
    source: str  # authors year, table/figure or page section
    url: str  # arXiv id or repository file
    arch: Arch
    hardware: str  # a100-80g, h100-sxm, ... (keys match app.core.inputs.presets where one exists)
    gpus_per_node: int
    interconnect: str
    gpus: int
    tp: int
    pp: int
    dp: int
    cp: int = 1
    vpp: int | None = None  # model chunks per pipeline rank (interleaved schedule); None: not
    global_batch: int | None  # sequences per iteration
    micro_batch: int | None
    schedule: str  # "1f1b", "interleaved", "none" (no PP), "unknown"
    recompute: str  # "none", "selective", "full", "unknown"
    # With recompute "full": layers per pipeline chunk recomputed (Megatron's
    # --recompute-num-layers, torchtitan's layer SAC); None: every layer (or not stated).
    recompute_layers: int | None = None
    sequence_parallel: bool | None
    zero: str  # "none", "distributed-optimizer", "zero-3", "fsdp", "unknown"
    precision: str  # "bf16", "fp16", "fp8"
    iteration_s: float | None = None
    tokens_per_s: float | None = None  # aggregate, all GPUs
    tokens_per_s_per_gpu: float | None = None
    tflops_per_gpu: float | None = None  # as reported, counting the source's FLOP formula
    aggregate_pflops: float | None = None
    mfu: float | None = None
    hfu: float | None = None
    flop_formula: str  # how the source counts FLOPs for its TFLOP/s or MFU; "" if it reports none
    verified: bool
    caveat: str = ""


# --- architectures -----------------------------------------------------------------------

_NARAYANAN = "Narayanan et al. 2021 Table 1 (heads, hidden, layers); V=51,200, s=2048 (§5.1)"


def _gpt(name: str, layers: int, hidden: int, heads: int, vocab: int, seq: int, src: str) -> Arch:
    # GPT/Megatron-style: learned positions, GeLU MLP with ffn = 4h.
    return Arch(name, layers, hidden, heads, None, 4 * hidden, vocab, seq, False, src)


def _megatron(name: str, layers: int, hidden: int, heads: int) -> Arch:
    return _gpt(name, layers, hidden, heads, 51_200, 2048, _NARAYANAN)


M_1_7B = _megatron("megatron-1.7b", 24, 2304, 24)
M_3_6B = _megatron("megatron-3.6b", 30, 3072, 32)
M_7_5B = _megatron("megatron-7.5b", 36, 4096, 32)
M_18B = _megatron("megatron-18b", 40, 6144, 48)
M_39B = _megatron("megatron-39b", 48, 8192, 64)
M_76B = _megatron("megatron-76b", 60, 10240, 80)
M_145B = _megatron("megatron-145b", 80, 12288, 96)
M_310B = _megatron("megatron-310b", 96, 16384, 128)
M_530B = _megatron("megatron-530b", 105, 20480, 128)
M_1T = _megatron("megatron-1t", 128, 25600, 160)

_KORTHIKANTI = "Korthikanti et al. 2022 Table 3; V=51,200, s=2048 (§6)"
K_22B = _gpt("megatron-22b", 48, 6144, 64, 51_200, 2048, _KORTHIKANTI)
GPT3_175B = _gpt(
    "gpt3-175b", 96, 12288, 96, 51_200, 2048,
    "Korthikanti et al. 2022 Table 3 / Narayanan et al. 2021 §5.3.2 (96 layers, 96 heads, "
    "h 12288); V=51,200, s=2048",
)  # fmt: skip
GPT3_175B_MEGASCALE = _gpt(
    "gpt3-175b-megascale", 96, 12288, 128, 64_000, 2048,
    "Jiang et al. 2024 Table 1 (heads printed as 128) and §6.1 (V=64,000, s=2048)",
)  # fmt: skip
GPT3_175B_NEMO = _gpt(
    "gpt3-175b-nemo", 96, 12288, 96, 51_200, 2048,
    "layers/hidden/vocab/seq from NVIDIA dgxc-benchmarking nemo_megatron/README_175b.md Notes "
    "(L=96, h=12288, V=51,200, s=2048); heads 96 from the GPT-3 architecture",
)  # fmt: skip
GPT3_5B_NEMO = _gpt(
    "gpt3-5b-nemo", 24, 4096, 32, 50_304, 2048,
    "NVIDIA NeMo-Megatron-Launcher conf/training/gpt3/5b.yaml (L=24, h=4096, 32 heads, "
    "ffn 4h, s=2048, GPT-2 BPE); vocab 50,304 = 50,257 padded to a multiple of 128 (derived)",
)  # fmt: skip


def _llama3(
    name: str, layers: int, hidden: int, heads: int, ffn: int, vocab: int, seq: int, src: str
) -> Arch:
    # Llama 3 (Dubey et al. 2024 Table 3): GQA with 8 KV heads, SwiGLU, RoPE, untied head.
    return Arch(name, layers, hidden, heads, 8, ffn, vocab, seq, True, src)


_DUBEY_T3 = "Dubey et al. 2024 Table 3 (vocab printed as 128,000)"
_L31 = "Dubey et al. 2024 Table 3; vocab 128,256 as in the dgxc-benchmarking FLOP notes"
LLAMA3_405B_8K = _llama3("llama3-405b", 126, 16384, 128, 53248, 128_000, 8192, _DUBEY_T3)
LLAMA3_405B_128K = _llama3("llama3-405b-128k", 126, 16384, 128, 53248, 128_000, 131072, _DUBEY_T3)
LLAMA31_8B = _llama3("llama3.1-8b", 32, 4096, 32, 14336, 128_256, 8192, _L31)
LLAMA31_70B = _llama3("llama3.1-70b", 80, 8192, 64, 28672, 128_256, 8192, _L31)
LLAMA31_405B = _llama3("llama3.1-405b", 126, 16384, 128, 53248, 128_256, 8192, _L31)


# --- hardware descriptions -----------------------------------------------------------------

_SELENE = (
    "Selene DGX A100: NVLink/NVSwitch in node; 8x 200 Gb/s HDR InfiniBand HCAs per node "
    "(plus 2 for storage); 3-level fat tree"
)
_DGX_H100 = "DGX H100 (8 GPUs, NVLink); network not stated on the page"
_META_RDMA = "Grand Teton: 8 GPUs per host, NVLink; RDMA 400 Gb/s per GPU"
_LLAMA3_NET = (
    "Grand Teton, NVLink in server; RoCE 400 Gb/s between GPUs; 3-layer Clos, 3,072-GPU pods "
    "at full bisection, 1:7 oversubscribed above"
)

# --- FLOP formulas --------------------------------------------------------------------------

_EQ3 = (
    "Narayanan eq. 3: F = 96·B·s·l·h²(1 + s/6h + V/16lh) per iteration, GEMMs only, counts the "
    "recompute forward (i.e. hardware FLOPs with full recompute)"
)
_EQ7 = (
    "Korthikanti App. A: model FLOPs 72·B·L·s·h²(1 + s/6h + V/12hL) (eq. 7); hardware FLOPs "
    "72·B·L·s·h²(1 + s/3h + V/12hL) (eq. 8); peak 312 TFLOP/s"
)
_MEGASCALE_FLOPS = (
    "MFU per Chowdhery et al. (model FLOPs, no recompute); formula not printed in the text read; "
    "consistent with 72·B·L·s·h²(1 + s/6h + V/12hL) / (time·GPUs·312 TFLOP/s) (checked: 53.0% "
    "for the 256-GPU row)"
)
_DUBEY_FLOPS = "BF16 MFU per Chowdhery et al. (model FLOPs); per-token formula not given"
_DGXC_GPT = (
    "dgxc Notes: per token 24·L·h² + 12·L·h·s (attention) + 48·L·h² (MLP) + 6·V·h (logits), "
    "x s per sequence; MFU vs 989 TFLOP/s (bf16)"
)
_DGXC_LLAMA = (
    "dgxc Notes: per token 12·L·h²(1 + g/a + s/h) (attention, non-causal) + 18·L·ffn·h (SwiGLU "
    "MLP) + 6·V·h, x s per sequence; MFU vs 989 TFLOP/s (bf16)"
)
_NEMO_FLOPS = (
    "NeMo 'Model TFLOP/sec/GPU' (model FLOPs, no recompute); for GPT3-175B it equals "
    "tokens/s x 72·L·h²(1 + s/6h + V/12hL) (checked: 726 tok/s -> 782 TFLOP/s)"
)
_TITAN_FLOPS = (
    "torchtitan train.py MFU: per token 6·N + 12·L·h·s vs 312 TFLOP/s (checked numerically "
    "against the 8B row with N = 8.03e9); code not read"
)


# --- helpers, one per source ---------------------------------------------------------------

# Megatron-LM examples/sc21/run_table_1.sh (the paper's reproduction script): micro-batch and
# --num-layers-per-virtual-pipeline-stage for each Table 1 row, fp16, --recompute-method
# uniform (full). vpp = (layers / pp) / layers-per-virtual-stage.
_T1_SCRIPT = "NVIDIA/Megatron-LM examples/sc21/run_table_1.sh + CONFIG.sh"


def _n21_t1(
    arch: Arch, gpus: int, tp: int, pp: int, batch: int, mbs: int, vpp: int | None,
    tflops: float, pct: float, pflops: float,
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source="Narayanan et al. 2021 Table 1",
        url="arXiv:2104.04473",
        arch=arch,
        hardware="a100-80g",
        gpus_per_node=8,
        interconnect=_SELENE,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=gpus // (tp * pp),
        vpp=vpp,
        global_batch=batch,
        micro_batch=mbs,
        schedule="none" if pp == 1 else ("interleaved" if vpp else "1f1b"),
        recompute="full",
        sequence_parallel=False,
        zero="none",
        precision="fp16",
        tflops_per_gpu=tflops,
        aggregate_pflops=pflops,
        mfu=None,
        hfu=pct,  # Table 1's "% of theoretical peak" counts eq. 3, i.e. recompute included
        flop_formula=_EQ3,
        verified=True,
        caveat=(
            f"micro-batch, interleave depth and fp16 from {_T1_SCRIPT}, not the paper "
            "(§5.1 says all Table 1 rows use the interleaved schedule); '% of peak' stored as hfu "
            "because eq. 3 includes the recompute forward pass"
        ),
    )


def _n21_t2(
    arch: Arch, gpus: int, tp: int, pp: int, batch: int, mbs: int, tflops: float, note: str,
    zero: str = "none",
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source="Narayanan et al. 2021 Table 2",
        url="arXiv:2104.04473",
        arch=arch,
        hardware="a100-80g",
        gpus_per_node=8,
        interconnect=_SELENE,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=gpus // (tp * pp),
        global_batch=batch,
        micro_batch=mbs,
        schedule="none" if pp == 1 else "unknown",
        recompute="unknown",
        sequence_parallel=False,
        zero=zero,
        precision="fp16",
        tflops_per_gpu=tflops,
        flop_formula=_EQ3,
        verified=True,
        caveat=note,
    )


def _k22(
    arch: Arch, gpus: int, pp: int, batch: int, mbs: int, vpp: int | None, secs: float,
    mfu: float | None, hfu: float | None, present: bool, dp: int = 1, note: str = "",
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source="Korthikanti et al. 2022 Table 5" if dp == 1 else "Korthikanti et al. 2022 §6.3",
        url="arXiv:2205.05198",
        arch=arch,
        hardware="a100-80g",
        gpus_per_node=8,
        interconnect="Selene DGX A100: NVLink/NVSwitch; 8x 200 Gb/s HDR InfiniBand HCAs per node",
        gpus=gpus,
        tp=8,
        pp=pp,
        dp=dp,
        vpp=vpp,
        global_batch=batch,
        micro_batch=mbs,
        schedule="none" if pp == 1 else ("interleaved" if vpp else "1f1b"),
        recompute="selective" if present else "full",
        sequence_parallel=present,
        zero="none",
        precision="mixed 16-bit (unspecified)",
        iteration_s=secs,
        mfu=mfu,
        hfu=hfu,
        flop_formula=_EQ7 if mfu is not None else "",
        verified=True,
        caveat=note,
    )


def _megascale(gpus: int, batch: int, secs: float, tokens: float, mfu: float, pflops: float):
    return PublishedRun(
        source="Jiang et al. 2024 (MegaScale) Table 2, Megatron-LM baseline rows",
        url="arXiv:2402.15627",
        arch=GPT3_175B_MEGASCALE,
        hardware="a100-unspecified",
        gpus_per_node=8,
        interconnect="not stated in the sections read (ByteDance cluster)",
        gpus=gpus,
        tp=8,
        pp=8,
        dp=gpus // 64,
        vpp=6,
        global_batch=batch,
        micro_batch=None,
        schedule="interleaved",
        recompute="unknown",
        sequence_parallel=None,
        zero="unknown",
        precision="unknown",
        iteration_s=secs,
        tokens_per_s=tokens,
        aggregate_pflops=pflops,
        mfu=mfu,
        flop_formula=_MEGASCALE_FLOPS,
        verified=True,
        caveat=(
            "paper says only 'NVIDIA Ampere GPUs'; MFU matches a 312 TFLOP/s peak, so A100 "
            "(memory size unstated); open-source Megatron-LM at commit 285068c8, not the "
            "MegaScale system; heads printed as 128 in Table 1"
        ),
    )


_DGXC = "NVIDIA dgxc-benchmarking"


def _dgxc(
    page: str, arch: Arch, gpus: int, tp: int, pp: int, cp: int, vpp: int | None, batch: int,
    secs: float, tokens: float, mfu: float, formula: str, note: str = "",
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source=f"{_DGXC} {page} (BF16 'Expected Performance' table)",
        url=f"github.com/NVIDIA/dgxc-benchmarking/{page}",
        arch=arch,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_DGX_H100,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=gpus // (tp * pp * cp),
        cp=cp,
        vpp=vpp,
        global_batch=batch,
        micro_batch=1,
        schedule="none" if pp == 1 else ("interleaved" if vpp else "1f1b"),
        recompute="unknown",
        sequence_parallel=None,
        zero="unknown",
        precision="bf16",
        iteration_s=secs,
        tokens_per_s=tokens,
        mfu=mfu,
        flop_formula=formula,
        verified=True,
        caveat=(
            "NeMo 24.09 (Llama) / NeMo launcher (GPT3); step time read at the last step. " + note
        ).strip(),
    )


def _nemo2407(
    arch: Arch, gpus: int, batch: int, mbs: int, tp: int, pp: int, cp: int, vpp: int,
    tok: float, tflops: float, note: str = "",
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source="NVIDIA NeMo docs, performance_summary.md (NeMo 24.07, DGX-H100, FP8 pretraining)",
        url="github.com/NVIDIA/NeMo/docs/source/performance/performance_summary.md",
        arch=arch,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_DGX_H100,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=gpus // (tp * pp * cp),
        cp=cp,
        vpp=vpp if vpp > 1 else None,
        global_batch=batch,
        micro_batch=mbs,
        schedule="none" if pp == 1 else ("interleaved" if vpp > 1 else "1f1b"),
        recompute="unknown",
        sequence_parallel=None,
        zero="unknown",
        precision="fp8",
        tokens_per_s_per_gpu=tok,
        tflops_per_gpu=tflops,
        flop_formula=_NEMO_FLOPS,
        verified=True,
        caveat=("FP8: model TFLOP/s exceeds a bf16 roofline. " + note).strip(),
    )


def _bridge2509(
    arch: Arch, gpus: int, batch: int, tp: int, pp: int, cp: int, vpp: int | None, fsdp: bool,
    tok: float, tflops: float,
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source="NVIDIA Megatron-Bridge performance-summary-archive.md, 25.09 container, DGX-H100",
        url="github.com/NVIDIA-NeMo/Megatron-Bridge/docs/performance-summary-archive.md",
        arch=arch,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_DGX_H100,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=gpus // (tp * pp * cp),
        cp=cp,
        vpp=vpp,
        global_batch=batch,
        micro_batch=1,
        schedule="none" if pp == 1 else ("interleaved" if vpp else "1f1b"),
        recompute="unknown",
        sequence_parallel=None,
        zero="fsdp" if fsdp else "unknown",
        precision="fp8",
        tokens_per_s_per_gpu=tok,
        tflops_per_gpu=tflops,
        flop_formula="Megatron-Bridge 'Model TFLOP/sec/GPU' (model FLOPs); formula not on page",
        verified=True,
        caveat=(
            "precision column absent in the 25.09 table; the page's H100 quantisation footnote "
            "and the 25.11 table (FP8-CS for these rows) indicate FP8"
        ),
    )


def _titan_h100(
    table: str, arch: Arch, gpus: int, tp: int, pp: int, fsdp: int, lbs: int, batch: int,
    schedule: str, recompute: str, precision: str, tok: float, note: str,
) -> PublishedRun:  # fmt: skip
    return PublishedRun(
        source=f"torchtitan benchmarks/llama3_h100_202412_torchtitan.md {table}",
        url="github.com/pytorch/torchtitan/benchmarks/llama3_h100_202412_torchtitan.md",
        arch=arch,
        hardware="h100-96g-hbm2e-500w",
        gpus_per_node=8,
        interconnect=_META_RDMA,
        gpus=gpus,
        tp=tp,
        pp=pp,
        dp=fsdp,
        vpp=None,
        global_batch=batch,
        micro_batch=lbs if pp == 1 else None,
        schedule=schedule,
        recompute=recompute,
        sequence_parallel=None,
        zero="fsdp",
        precision=precision,
        tokens_per_s_per_gpu=tok,
        flop_formula="",
        verified=True,
        caveat=(
            "H100 with 96 GB HBM2e, 2.4 TB/s, 500 W cap (not a standard SXM part); TPS read at "
            "iteration 90. " + note
        ).strip(),
    )


def _titan_a100(
    arch: Arch, recompute: str, wps: float, mfu: float, note: str, every: int | None = None
) -> PublishedRun:
    """``every``: torchtitan's selective layer AC, selective_ac_option = N (a whole layer
    checkpointed every N-th one), as recompute "full" for layers // N of them."""
    return PublishedRun(
        source="torchtitan docs/performance.md, 'Llama 3 performance numbers' (64 A100)",
        url="github.com/pytorch/torchtitan/docs/performance.md (early version)",
        arch=arch,
        hardware="a100-80g",
        gpus_per_node=8,
        interconnect="not stated",
        gpus=64,
        tp=1,
        pp=1,
        dp=64,
        global_batch=64,
        micro_batch=1,
        schedule="none",
        recompute="full" if every else recompute,
        recompute_layers=arch.layers // every if every else None,
        sequence_parallel=None,
        zero="fsdp",
        precision="bf16",
        tokens_per_s_per_gpu=wps,
        mfu=mfu,
        flop_formula=_TITAN_FLOPS,
        verified=True,
        caveat=f"{note}; WPS is per GPU (consistent with the MFU); global batch 64 (1 x 64 ranks)",
    )


_L3_8B_TITAN = _llama3(
    "llama3-8b", 32, 4096, 32, 14336, 128_256, 8192,
    "Dubey et al. 2024 Table 3; seq 8192 from torchtitan train_configs/llama3_8b.toml",
)  # fmt: skip
_L3_70B_TITAN = _llama3(
    "llama3-70b", 80, 8192, 64, 28672, 128_256, 8192,
    "Dubey et al. 2024 Table 3; seq 8192 assumed (same as the 8B toml; 70B toml not read)",
)  # fmt: skip
_L31_405B_TITAN = _llama3(
    "llama3.1-405b", 126, 16384, 128, 53248, 128_256, 8192,
    "Dubey et al. 2024 Table 3; seq 8192 assumed (405B toml not read)",
)  # fmt: skip

_T2_SPLIT = (
    "Table 2 gives only model-parallel size 96; TP8 x PP12 is inferred (the paper uses t = 8, "
    "the GPUs per node, throughout §5)"
)
_ZERO3 = "ZeRO-3 via DeepSpeed, no model parallelism"
_PROXY_TOK = "the page says the 405B run uses the GPT2BPETokenizer as a proxy (vocab != 128,256)"

# fmt: off
RUNS: tuple[PublishedRun, ...] = (
    # Narayanan et al. 2021 (arXiv:2104.04473) Table 1: weak scaling, A100-80G, end-to-end.
    _n21_t1(M_1_7B, 32, 1, 1, 512, 16, None, 137, 0.44, 4.4),  # Narayanan 2021 Table 1 row 1
    _n21_t1(M_3_6B, 64, 2, 1, 512, 16, None, 138, 0.44, 8.8),  # Narayanan 2021 Table 1 row 2
    _n21_t1(M_7_5B, 128, 4, 1, 512, 16, None, 142, 0.46, 18.2),  # Narayanan 2021 Table 1 row 3
    _n21_t1(M_18B, 256, 8, 1, 1024, 8, None, 135, 0.43, 34.6),  # Narayanan 2021 Table 1 row 4
    _n21_t1(M_39B, 512, 8, 2, 1536, 4, None, 138, 0.44, 70.8),  # Narayanan 2021 Table 1 row 5
    _n21_t1(M_76B, 1024, 8, 4, 1792, 2, 3, 140, 0.45, 143.8),  # Narayanan 2021 Table 1 row 6
    _n21_t1(M_145B, 1536, 8, 8, 2304, 2, 2, 148, 0.47, 227.1),  # Narayanan 2021 Table 1 row 7
    _n21_t1(M_310B, 1920, 8, 16, 2160, 1, 2, 155, 0.50, 297.4),  # Narayanan 2021 Table 1 row 8
    _n21_t1(M_530B, 2520, 8, 35, 2520, 1, 3, 163, 0.52, 410.2),  # Narayanan 2021 Table 1 row 9
    _n21_t1(M_1T, 3072, 8, 64, 3072, 1, None, 163, 0.52, 502.0),  # Narayanan 2021 Table 1 row 10
    # Narayanan et al. 2021 Table 2: PTD-P rows (fixed global batch, more GPUs = more DP).
    _n21_t2(GPT3_175B, 384, 8, 12, 1536, 1, 153, _T2_SPLIT),  # Narayanan 2021 Table 2, PTD-P 384
    _n21_t2(GPT3_175B, 768, 8, 12, 1536, 1, 149, _T2_SPLIT),  # Narayanan 2021 Table 2, PTD-P 768
    _n21_t2(GPT3_175B, 1536, 8, 12, 1536, 1, 141, _T2_SPLIT),  # Narayanan 2021 Table 2, PTD-P 1536
    _n21_t2(M_530B, 560, 8, 35, 2240, 1, 171, "MP 280 = TP8 x PP35 as in Table 1"),  # Table 2
    _n21_t2(M_530B, 1120, 8, 35, 2240, 1, 167, "MP 280 = TP8 x PP35 as in Table 1"),  # Table 2
    _n21_t2(M_530B, 2240, 8, 35, 2240, 1, 159, "MP 280 = TP8 x PP35 as in Table 1"),  # Table 2
    # Narayanan et al. 2021 Table 2: ZeRO-3 rows (pure data parallelism, sharded states).
    _n21_t2(GPT3_175B, 384, 1, 1, 1536, 4, 144, _ZERO3, zero="zero-3"),  # Narayanan Table 2
    _n21_t2(GPT3_175B, 768, 1, 1, 1536, 2, 88, _ZERO3, zero="zero-3"),  # Narayanan Table 2
    _n21_t2(GPT3_175B, 1536, 1, 1, 1536, 1, 44, _ZERO3, zero="zero-3"),  # Narayanan Table 2
    # Korthikanti et al. 2022 (arXiv:2205.05198) Table 5 "Present Work" (SP + selective), DP 1.
    _k22(K_22B, 8, 1, 4, 4, None, 1.10, 0.415, 0.437, True),  # Korthikanti 2022 Table 5, 22B
    _k22(GPT3_175B, 64, 8, 64, 1, 3, 13.75, 0.514, 0.528, True),  # Korthikanti 2022 Table 5, 175B
    _k22(M_530B, 280, 35, 280, 1, 3, 37.83, 0.560, 0.570, True),  # Korthikanti 2022 Table 5, 530B
    _k22(M_1T, 512, 64, 512, 1, None, 71.49, 0.563, 0.570, True),  # Korthikanti 2022 Table 5, 1T
    # Korthikanti et al. 2022 Table 5 "Full Recompute" baseline (no SP); MFU not reported.
    _k22(K_22B, 8, 1, 4, 4, None, 1.42, None, None, False),  # Korthikanti 2022 Table 5, 22B full
    _k22(GPT3_175B, 64, 8, 64, 1, 3, 18.13, None, None, False),  # Korthikanti Table 5, 175B full
    _k22(M_530B, 280, 35, 280, 1, 3, 49.05, None, None, False),  # Korthikanti Table 5, 530B full
    _k22(M_1T, 512, 64, 512, 1, None, 94.42, None, None, False),  # Korthikanti Table 5, 1T full
    # Korthikanti et al. 2022 §6.3: the 530B model scaled to 8-way DP (2240 GPUs).
    _k22(
        M_530B, 2240, 35, 2240, 1, 3, 39.15, 0.542, None, True, dp=8,
        note="batch scaled with DP (280 x 8); no DP all-reduce overlap (§6.3)",
    ),  # Korthikanti 2022 §6.3 (530B, DP 8)
    # Dubey et al. 2024 (arXiv:2407.21783) Table 4: Llama 3 405B pre-training stages, H100.
    PublishedRun(
        source="Dubey et al. 2024 Table 4, row 1",
        url="arXiv:2407.21783",
        arch=LLAMA3_405B_8K,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_LLAMA3_NET,
        gpus=8192,
        tp=8,
        pp=16,
        dp=64,
        global_batch=2048,
        micro_batch=None,
        schedule="interleaved",
        recompute="none",
        sequence_parallel=None,
        zero="fsdp",
        precision="bf16",
        tflops_per_gpu=430,
        mfu=0.43,
        flop_formula=_DUBEY_FLOPS,
        verified=True,
        caveat=(
            "batch/DP 32 x DP 64 = 2048 seqs = 16M tokens; interleave depth V not given; §3.3.2: "
            "8K-token pre-training ran 'without activation checkpointing'; FSDP shards optimizer "
            "and gradients, parameters not resharded after forward; H100 80GB HBM3 at 700 W"
        ),
    ),  # Dubey et al. 2024 Table 4 row 1 (8,192 GPUs)
    PublishedRun(
        source="Dubey et al. 2024 Table 4, row 2",
        url="arXiv:2407.21783",
        arch=LLAMA3_405B_8K,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_LLAMA3_NET,
        gpus=16384,
        tp=8,
        pp=16,
        dp=128,
        global_batch=2048,
        micro_batch=None,
        schedule="interleaved",
        recompute="none",
        sequence_parallel=None,
        zero="fsdp",
        precision="bf16",
        tflops_per_gpu=400,
        mfu=0.41,
        flop_formula=_DUBEY_FLOPS,
        verified=True,
        caveat=(
            "batch/DP 16 x DP 128 = 2048 seqs; interleave depth V not given; no activation "
            "checkpointing for 8K sequences (§3.3.2)"
        ),
    ),  # Dubey et al. 2024 Table 4 row 2 (16,384 GPUs)
    PublishedRun(
        source="Dubey et al. 2024 Table 4, row 3",
        url="arXiv:2407.21783",
        arch=LLAMA3_405B_128K,
        hardware="h100-sxm",
        gpus_per_node=8,
        interconnect=_LLAMA3_NET,
        gpus=16384,
        tp=8,
        pp=16,
        dp=8,
        cp=16,
        global_batch=128,
        micro_batch=None,
        schedule="interleaved",
        recompute="unknown",
        sequence_parallel=None,
        zero="fsdp",
        precision="bf16",
        tflops_per_gpu=380,
        mfu=0.38,
        flop_formula=_DUBEY_FLOPS,
        verified=True,
        caveat=(
            "long-context stage, CP16 (all-gather K/V). DP is printed as 8 in the PDF "
            "transcriptions read and as 4 in the arXiv-HTML one; 8x16x16x4 = 16,384 GPUs, but "
            "16 seqs/DP x 8 x 131,072 = 16M tokens/batch matches DP 8: the table is not "
            "self-consistent. dp=8 and global_batch=128 follow the tokens/batch column"
        ),
    ),  # Dubey et al. 2024 Table 4 row 3 (16,384 GPUs, 128K context)
    # Jiang et al. 2024 (MegaScale, arXiv:2402.15627) Table 2: Megatron-LM baseline, 175B.
    _megascale(256, 768, 40.0, 39.3e3, 0.530, 43.3),  # MegaScale Table 2, Megatron-LM 256 GPUs
    _megascale(512, 768, 21.2, 74.1e3, 0.499, 77.6),  # MegaScale Table 2, Megatron-LM 512 GPUs
    _megascale(768, 768, 15.2, 103.8e3, 0.467, 111.9),  # MegaScale Table 2, Megatron-LM 768
    _megascale(1024, 768, 11.9, 132.7e3, 0.447, 131.9),  # MegaScale Table 2, Megatron-LM 1024
    _megascale(3072, 6144, 29.02, 433.6e3, 0.487, 466.8),  # MegaScale Table 2, Megatron-LM 3072
    _megascale(6144, 6144, 14.78, 851.6e3, 0.478, 916.3),  # MegaScale Table 2, Megatron-LM 6144
    _megascale(8192, 6144, 12.24, 1027.9e3, 0.433, 1106.7),  # MegaScale Table 2, Megatron-LM 8192
    _megascale(12288, 6144, 8.57, 1466.8e3, 0.412, 1579.5),  # MegaScale Table 2, Megatron-LM 12288
    # NVIDIA dgxc-benchmarking nemo_megatron/README_175b.md: GPT-3 175B BF16, TP4 PP8 VP12.
    _dgxc("nemo_megatron/README_175b.md", GPT3_175B_NEMO, 128, 4, 8, 1, 12, 256, 8.309, 63099,
          0.5354, _DGXC_GPT),  # dgxc GPT3 175B BF16, 128 H100
    _dgxc("nemo_megatron/README_175b.md", GPT3_175B_NEMO, 256, 4, 8, 1, 12, 512, 8.408, 124712,
          0.5291, _DGXC_GPT),  # dgxc GPT3 175B BF16, 256 H100
    _dgxc("nemo_megatron/README_175b.md", GPT3_175B_NEMO, 512, 4, 8, 1, 12, 1024, 8.42, 249068,
          0.5284, _DGXC_GPT),  # dgxc GPT3 175B BF16, 512 H100
    _dgxc("nemo_megatron/README_175b.md", GPT3_175B_NEMO, 1024, 4, 8, 1, 12, 2048, 8.453, 496191,
          0.5263, _DGXC_GPT),  # dgxc GPT3 175B BF16, 1024 H100
    _dgxc("nemo_megatron/README_175b.md", GPT3_175B_NEMO, 2048, 4, 8, 1, 12, 4096, 8.49, 988057,
          0.5240, _DGXC_GPT),  # dgxc GPT3 175B BF16, 2048 H100
    # NVIDIA dgxc-benchmarking llama3.1/README_8b.md: Llama 3.1 8B BF16, TP1 PP1 CP2.
    _dgxc("llama3.1/README_8b.md", LLAMA31_8B, 8, 1, 1, 2, None, 128, 12.91, 81222, 0.5937,
          _DGXC_LLAMA),  # dgxc Llama 3.1 8B BF16, 8 H100
    _dgxc("llama3.1/README_8b.md", LLAMA31_8B, 16, 1, 1, 2, None, 256, 13.00, 161319, 0.5896,
          _DGXC_LLAMA),  # dgxc Llama 3.1 8B BF16, 16 H100
    _dgxc("llama3.1/README_8b.md", LLAMA31_8B, 32, 1, 1, 2, None, 512, 13.05, 321403, 0.5873,
          _DGXC_LLAMA),  # dgxc Llama 3.1 8B BF16, 32 H100
    _dgxc("llama3.1/README_8b.md", LLAMA31_8B, 64, 1, 1, 2, None, 1024, 13.08, 641331, 0.5860,
          _DGXC_LLAMA),  # dgxc Llama 3.1 8B BF16, 64 H100
    _dgxc("llama3.1/README_8b.md", LLAMA31_8B, 128, 1, 1, 2, None, 2048, 13.10, 1280704, 0.5851,
          _DGXC_LLAMA),  # dgxc Llama 3.1 8B BF16, 128 H100
    # NVIDIA dgxc-benchmarking llama3.1/README_70b.md: Llama 3.1 70B BF16, TP4 PP4 CP2 VP5.
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 64, 4, 4, 2, 5, 128, 14.72, 71235, 0.5410,
          _DGXC_LLAMA),  # dgxc Llama 3.1 70B BF16, 64 H100
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 128, 4, 4, 2, 5, 256, 14.73, 142373, 0.5406,
          _DGXC_LLAMA),  # dgxc Llama 3.1 70B BF16, 128 H100
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 256, 4, 4, 2, 5, 512, 14.8, 283399, 0.5381,
          _DGXC_LLAMA),  # dgxc Llama 3.1 70B BF16, 256 H100
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 512, 4, 4, 2, 5, 1024, 14.89, 563372, 0.5348,
          _DGXC_LLAMA),  # dgxc Llama 3.1 70B BF16, 512 H100
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 1024, 4, 4, 2, 5, 2048, 14.92, 1124478, 0.5338,
          _DGXC_LLAMA),  # dgxc Llama 3.1 70B BF16, 1024 H100
    _dgxc("llama3.1/README_70b.md", LLAMA31_70B, 2048, 4, 4, 2, 5, 4096, 14.98, 2248957, 0.5338,
          _DGXC_LLAMA, "source's tokens/s is 0.4% above 8192 x 4096 / 14.98"),  # dgxc 70B, 2048
    # NVIDIA dgxc-benchmarking llama3.1/README_405b.md: Llama 3.1 405B BF16, TP8 PP9 CP2 VP7
    # (full 126-layer model only; the 32/96/192-GPU rows are truncated proxy models).
    _dgxc("llama3.1/README_405b.md", LLAMA31_405B, 576, 8, 9, 2, 7, 252, 17.20, 120022, 0.5578,
          _DGXC_LLAMA, _PROXY_TOK),  # dgxc Llama 3.1 405B BF16, 576 H100
    _dgxc("llama3.1/README_405b.md", LLAMA31_405B, 1152, 8, 9, 2, 7, 504, 17.52, 235660, 0.5476,
          _DGXC_LLAMA, _PROXY_TOK),  # dgxc Llama 3.1 405B BF16, 1152 H100
    _dgxc("llama3.1/README_405b.md", LLAMA31_405B, 2304, 8, 9, 2, 7, 1008, 17.62, 468646, 0.5445,
          _DGXC_LLAMA, _PROXY_TOK),  # dgxc Llama 3.1 405B BF16, 2304 H100
    # NVIDIA NeMo performance_summary.md (NeMo 24.07, DGX-H100, FP8): pretraining rows.
    _nemo2407(GPT3_5B_NEMO, 64, 2048, 4, 1, 1, 1, 1, 22521, 736),  # NeMo 24.07 GPT3-5B, 64 H100
    _nemo2407(GPT3_175B_NEMO, 128, 256, 1, 4, 8, 1, 6, 726, 782),  # NeMo 24.07 GPT3-175B, 128
    _nemo2407(
        GPT3_175B_NEMO, 512, 2048, 2, 4, 8, 1, 6, 782, 842,
        note="the 842 TFLOP/s cell links to the MLCommons training results",
    ),  # NeMo 24.07 GPT3-175B, 512 H100
    _nemo2407(LLAMA31_8B, 8, 128, 1, 1, 1, 2, 1, 12036, 697,
              note="row labelled LLAMA3-8B"),  # NeMo 24.07 LLAMA3-8B, 8 H100
    _nemo2407(LLAMA31_70B, 64, 128, 1, 4, 4, 2, 5, 1533, 738,
              note="row labelled LLAMA3-70B"),  # NeMo 24.07 LLAMA3-70B, 64 H100
    # NVIDIA Megatron-Bridge performance summary archive, 25.09 container, DGX-H100.
    _bridge2509(LLAMA31_8B, 8, 128, 1, 1, 1, None, True, 14079, 725),  # Bridge 25.09 8B, 8 H100
    _bridge2509(LLAMA31_70B, 64, 128, 4, 8, 1, 5, False, 1619, 727),  # Bridge 25.09 70B, 64 H100
    _bridge2509(LLAMA31_405B, 1024, 512, 8, 8, 2, 8, False, 302, 763),  # Bridge 25.09 405B, 1024
    # torchtitan benchmarks/llama3_h100_202412_torchtitan.md (H100 96GB, 500 W).
    _titan_h100("Table 1", _L3_8B_TITAN, 8, 1, 1, 8, 2, 16, "none", "selective", "bf16", 5762,
                "eager FSDP"),  # torchtitan H100 Table 1, FSDP, 8 GPUs
    _titan_h100("Table 1", _L3_8B_TITAN, 8, 1, 1, 8, 2, 16, "none", "selective", "bf16", 6667,
                "FSDP + torch.compile"),  # torchtitan H100 Table 1, FSDP+compile, 8
    _titan_h100("Table 3", _L3_8B_TITAN, 128, 1, 1, 128, 2, 256, "none", "selective", "bf16",
                5605, "eager FSDP"),  # torchtitan H100 Table 3, FSDP, 128 GPUs
    _titan_h100("Table 3", _L3_8B_TITAN, 128, 1, 1, 128, 2, 256, "none", "selective", "bf16",
                6514, "FSDP + torch.compile"),  # torchtitan H100 Table 3, compile, 128
    _titan_h100("Table 4", _L3_70B_TITAN, 256, 8, 1, 32, 16, 512, "none", "full", "fp8", 829,
                "2D (FSDP 32 x TP 8), torch.compile, Float8 linears, no AsyncTP"),  # Table 4
    _titan_h100("Table 5", _L31_405B_TITAN, 512, 8, 8, 8, 32, 256, "1f1b", "full", "fp8", 100,
                "3D, compile, Float8, AsyncTP; local batch 32 is per DP rank"),  # Table 5 1F1B
    _titan_h100("Table 5", _L31_405B_TITAN, 512, 8, 8, 8, 32, 256, "interleaved", "full", "fp8",
                128, "3D, compile, Float8, AsyncTP; interleave depth not stated"),  # Table 5
    # torchtitan docs/performance.md (early version): FSDP2 on 64 A100-80G, local batch 1.
    # Layer SAC: torchtitan's default selective_ac_option = "2" (every 2nd layer). Op SAC
    # (_save_list: every other matmul's output kept, the rest recomputed) recomputes about
    # half of each layer's forward GEMM FLOPs: costed as half the layers, same FLOPs.
    _titan_a100(_L3_8B_TITAN, "selective", 2904, 0.568, "selective layer AC (every 2nd layer)",
                every=2),  # torchtitan A100
    _titan_a100(_L3_8B_TITAN, "selective", 2973, 0.582, "selective op AC (every other matmul "
                "recomputed; costed as half the layers fully recomputed)", every=2),  # A100
    _titan_a100(_L3_70B_TITAN, "full", 331, 0.517, "full AC"),  # torchtitan A100 Llama3 70B
)
# fmt: on
