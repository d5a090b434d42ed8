"""What one published run is: the ``Arch`` and ``PublishedRun`` records and the words their
string fields may take. The rows themselves live in published_runs.json (read by run_loader).

Fields the source does not state are ``None`` (or ``"unknown"`` for strings); nothing is filled
in from memory. Throughput fields hold the source's numbers exactly as published, in the
source's units: ``tokens_per_s`` is the aggregate over all GPUs, ``tokens_per_s_per_gpu`` is per
GPU, ``aggregate_pflops`` is the whole job. Percentages are stored as fractions (41% -> 0.41).
"""

from __future__ import annotations

from dataclasses import dataclass

# The words run_loader accepts; board.py and bands.py branch on these exact spellings.
SCHEDULES = ("1f1b", "interleaved", "none", "unknown")  # "none": no pipeline (pp 1)
RECOMPUTES = ("none", "selective", "full", "unknown")
ZEROS = ("none", "distributed-optimizer", "zero-3", "fsdp", "unknown")
PRECISIONS = ("bf16", "fp16", "fp8", "mixed 16-bit (unspecified)", "unknown")


@dataclass(frozen=True)
class Arch:
    """A decoder-only transformer as the source (or ``arch_source``) describes it. A mixture
    of experts names the shipped preset (app/core/inputs/moe_models.py, each citing its
    config.json) that the board prices: ``preset`` and its ``experts``, the other fields its
    dense shape, which run_loader checks against the preset."""

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
    preset: str = ""  # a mixture of experts: the model preset it is priced as
    experts: int | None = None  # routed experts per MoE layer; None: dense


@dataclass(frozen=True, kw_only=True)
class PublishedRun:
    """One measured run. ``verified`` is True when the figure was read in the source text (a
    transcription of the paper, or the framework's own repository file) during the survey;
    ``caveat`` says what is inferred, derived or read off a table with ambiguities; ``note``
    says where in the source the row sits and how a derived value was worked out."""

    id: str  # unique in the data file, e.g. "narayanan2021-t1-r6"
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
    ep: int = 1  # expert-parallel size (a mixture of experts; Megatron's folding over tp x cp x dp)
    etp: int | None = None  # expert tensor-parallel size; None: tp (Megatron's default)
    vpp: int | None = None  # model chunks per pipeline rank (interleaved schedule); None: not
    global_batch: int | None  # sequences per iteration
    micro_batch: int | None
    schedule: str  # one of SCHEDULES
    recompute: str  # one of RECOMPUTES
    # With recompute "full": layers per pipeline chunk recomputed (Megatron's
    # --recompute-num-layers, torchtitan's layer SAC); None: every layer (or not stated).
    recompute_layers: int | None = None
    sequence_parallel: bool | None
    zero: str  # one of ZEROS
    precision: str  # one of PRECISIONS
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
    note: str = ""

    @property
    def moe(self) -> bool:
        """A mixture-of-experts run: its own population on the board (fit.fits_on, kinds)."""
        return bool(self.arch.experts)
