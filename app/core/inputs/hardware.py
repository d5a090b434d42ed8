"""Hardware: HardwareSpec, its efficiency constants, and the named presets (datasheet figures).

Frozen specs; the dict is a constant, never mutated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Efficiency:
    """What a profile's kernels and collectives sustain: one set per hardware profile, never
    tuned per run (app/core/cost/compute.py and comm.py say where each enters)."""

    gemm_max_fraction: float = 0.8  # of peak, for large GEMMs
    gemm_half_gflop: float = 2.0  # GEMM size (GFLOP per GPU) that reaches half of that
    flash_fraction: float = 0.5  # of peak, flash-attention forward (FLOPs actually computed)
    hbm_fraction: float = 0.8  # of HBM bandwidth, for elementwise and normalisation kernels
    intra_busbw_fraction: float = 0.8  # nccl-tests bus bandwidth / link bandwidth, in a domain
    inter_busbw_fraction: float = 0.9  # the same over the NICs
    intra_latency_us: float = 2.0  # per ring step inside a scale-up domain
    inter_latency_us: float = 6.0  # per ring step over the network
    # Host time per kernel launch (eager dispatch, autograd, launch), serial with the kernel:
    # what tiny layers are made of. 0 in the presets (fitted without it; at their sizes GPU
    # kernels hide the launches); `meshscope calibrate` measures it (compute.host_overhead_s).
    kernel_overhead_us: float = 0.0
    # A pipeline send's latency inside a domain when measured apart from the collectives'
    # per-step one (meshscope calibrate: gloo's p2p pays more than a ring step); 0: that one.
    p2p_latency_us: float = 0.0
    # Host time per parameter tensor of an optimizer that steps one tensor at a time (torch's
    # AdamW on CPU: no foreach/fused kernels there, torch/optim/adamw.py _single_tensor_adamw).
    # 0 in the presets: Megatron's fused and torch's foreach Adam step every tensor in a few
    # multi-tensor kernels (OPTIMIZER_KERNELS). `meshscope calibrate` measures it.
    optimizer_tensor_us: float = 0.0


@dataclass(frozen=True)
class HardwareSpec:
    name: str
    peak_tflops: float  # dense bf16 tensor-core peak per GPU
    hbm_gib: float
    hbm_tbps: float  # HBM bandwidth, TB/s
    intra_gbps: float  # per-GPU scale-up bandwidth (NVLink, Infinity Fabric, PCIe), GB/s one way
    inter_gbps: float  # one GPU's share of the node's scale-out NICs, GB/s one direction
    gpus_per_node: int = 8
    nics_per_node: int = 8  # east-west NICs; inter_gbps = nics x NIC GB/s / gpus_per_node
    nvlink_domain: int = 0  # GPUs on one scale-up fabric; 0 = one node (GB200 NVL72: 72)
    source: str = ""  # the datasheet (and reference architecture) the figures come from
    efficiency: Efficiency = field(default_factory=Efficiency)
    # fp32 GEMMs and attention: dense TF32 tensor-core peak (PyTorch with allow_tf32, as
    # Megatron-LM sets it); 0 = peak_tflops (a calibrated profile measured in its own dtype).
    fp32_tflops: float = 0.0
    # Per-process GPU memory outside PyTorch's caching allocator: the CUDA context with its
    # loaded kernels and NCCL's buffers, GiB (the presets' figures and sources: MEMORY_FLOOR).
    memory_floor_gib: float = 0.0
    # Dense FP8 tensor-core peak per GPU, TFLOP/s (datasheets quote it with sparsity: half
    # of that); 0 = no FP8 tensor cores (Ampere and older), so FP8 recipes are refused.
    fp8_tflops: float = 0.0
    # Hardware block scaling of MX formats (OCP Microscaling spec v1.0): Blackwell's tensor
    # cores take E8M0 scales per 32 elements (NVIDIA Blackwell architecture technical brief).
    mxfp8: bool = False

    def __post_init__(self) -> None:
        # A floor is memory, so not negative, and it must leave the model some HBM.
        if not 0.0 <= self.memory_floor_gib < self.hbm_gib:
            raise ValueError(
                f"memory_floor_gib: {self.memory_floor_gib} GiB must be at least 0 and below "
                f"hbm_gib ({self.hbm_gib} GiB)"
            )

    @property
    def domain_size(self) -> int:
        return self.nvlink_domain or self.gpus_per_node

    def matmul_tflops(self, element_bytes: int) -> float:
        """The tensor-core peak GEMMs of this element size run at: 16-bit, or fp32 as TF32."""
        return (self.fp32_tflops or self.peak_tflops) if element_bytes == 4 else self.peak_tflops


# One set of constants per GPU generation. The GEMM ceilings come from
# `python bench/fidelity.py --fit` over the published runs: the least median |error| among
# ceilings whose max is within 15%. A100: 61 rows from 6 sources, small one-node models
# included; 0.68, median 2.2% in-sample and 2.5% with each source held out (0.74 before the
# small-model rows and FlashAttention-1's speed, compute.FA1_SPEED). H100: 12 rows of 3
# sources that disagree: all of them pick 0.55 (median 13.4%, max 18.3%), NVIDIA's five
# Llama rows alone 0.64 (0.3%), MosaicML's 2023 H100 table wants less. 0.63 is kept: the
# sources' software differs more than the GPUs do, and the held-out bands say so (NVIDIA's
# rows held out at 0.55: 13.9%). The rest are datasheet-relative microbenchmark figures.
AMPERE = Efficiency(
    gemm_max_fraction=0.68,
    gemm_half_gflop=2.0,
    flash_fraction=0.6,  # Dao 2023 (FlashAttention-2) Fig. 4: 50-73% of A100 peak forward
    hbm_fraction=0.8,  # STREAM-like kernels: ~1.6 of 2.0 TB/s
    intra_busbw_fraction=0.77,  # nccl-tests all_reduce on DGX A100: ~230 of 300 GB/s
    inter_busbw_fraction=0.92,  # ~23 of 25 GB/s per HDR NIC
)
HOPPER = Efficiency(
    gemm_max_fraction=0.63,
    gemm_half_gflop=6.0,  # three times A100's rate needs GEMMs three times larger to fill
    flash_fraction=0.4,  # Shah et al. 2024 (FlashAttention-3) Fig. 1: FA2 ~35-40% on H100
    hbm_fraction=0.85,
    intra_busbw_fraction=0.8,  # nccl-tests all_reduce on DGX H100: ~360 of 450 GB/s
    inter_busbw_fraction=0.9,
)

# The per-process floor, GiB, from published measurements (not fitted to any run):
# A100: the CUDA context takes ~400 MB with CUDA >= 11.7's lazy module loading (pytorch/pytorch
# #109888, #107667: over 1,000 MB before it) and one NCCL communicator over a >2-GPU NVLink
# group 688 MB on 4x A100 (NVIDIA/nccl #964): ~1.1 GB = 1.0 GiB. Hopper: 1.06 GB per GPU not
# PyTorch's on 8x H100 once NCCL is up (NVIDIA/nccl #1685) = 1.0 GiB. Blackwell, MI300X and
# L40S: no published per-process figure was found; the same 1.0 GiB is assumed.
MEMORY_FLOOR = MappingProxyType({"ampere": 1.0, "hopper": 1.0, "assumed": 1.0})

# fp32_tflops is each datasheet's TF32 tensor-core figure without sparsity (half the quoted
# sparse one): A100 156, H100/H800/H200 494.5, B200 1,125 (DGX: 18 PF sparse / 8 GPUs / 2),
# GB200 1,250 (NVL72: 180 PF sparse / 72 / 2), MI300X 653.7, L40S 183.
# fp8_tflops: each datasheet's FP8 tensor-core figure without sparsity: H100/H800/H200
# SXM 1,979 (3,958 sparse), B200 4,500 (DGX B200: 72 PF sparse / 8 / 2), GB200 5,000 (NVL72:
# 720 PF sparse / 72 / 2), MI300X 2,614.9 (5,229.8 sparse), L40S 733 (1,466 sparse); A100
# has no FP8 (its datasheet lists none). MXFP8 in hardware: Blackwell (B200, GB200) only.
# Datasheet HBM capacities in GB are stacks of whole GiB (80 GB = 5 x 16 GiB), so they enter
# hbm_gib unchanged. Link figures are per GPU and one direction: datasheets quote NVLink and
# Infinity Fabric both ways, so they are halved. inter_gbps = nics_per_node x NIC GB/s /
# gpus_per_node over the compute (east-west) NICs only; storage and management NICs are left out.
# fmt: off
HARDWARE: MappingProxyType[str, HardwareSpec] = MappingProxyType(
    {
        # NVIDIA A100 datasheet (40GB SXM): 312 TFLOP/s bf16 dense, 1,555 GB/s HBM2, NVLink3
        # 600 GB/s both ways. NICs, not on the datasheet: DGX A100 user guide, 8 single-port
        # ConnectX-6 200 Gb/s HDR InfiniBand for the cluster network = 25 GB/s per GPU.
        "a100-40g": HardwareSpec(
            "a100-40g", 312.0, 40.0, 1.555, 300.0, 25.0, nics_per_node=8, fp32_tflops=156.0,
            efficiency=AMPERE,
            memory_floor_gib=MEMORY_FLOOR["ampere"],
            source="NVIDIA A100 Tensor Core GPU datasheet (40GB SXM); NICs: DGX A100 "
            "user guide (8x ConnectX-6 200 Gb/s HDR)",
        ),
        # NVIDIA A100 datasheet (80GB SXM): as 40GB, with 2,039 GB/s HBM2e; NICs as DGX A100.
        "a100-80g": HardwareSpec(
            "a100-80g", 312.0, 80.0, 2.039, 300.0, 25.0, nics_per_node=8, fp32_tflops=156.0,
            efficiency=AMPERE,
            memory_floor_gib=MEMORY_FLOOR["ampere"],
            source="NVIDIA A100 Tensor Core GPU datasheet (80GB SXM); NICs: DGX A100 "
            "user guide (8x ConnectX-6 200 Gb/s HDR)",
        ),
        # NVIDIA H100 datasheet (SXM): 1,979 TFLOP/s bf16 with sparsity = 989 dense, 3.35 TB/s,
        # NVLink4 900 GB/s both ways. NICs: DGX H100 user guide, 8 ConnectX-7 400 Gb/s NDR.
        "h100-sxm": HardwareSpec(
            "h100-sxm", 989.0, 80.0, 3.35, 450.0, 50.0, nics_per_node=8, fp32_tflops=494.5,
            fp8_tflops=1979.0,
            efficiency=HOPPER,
            memory_floor_gib=MEMORY_FLOOR["hopper"],
            source="NVIDIA H100 Tensor Core GPU datasheet (SXM); NICs: DGX H100 user guide "
            "(8x ConnectX-7 400 Gb/s NDR)",
        ),
        # NVIDIA H800 (export H100): H100 SXM's compute and HBM, NVLink cut to 400 GB/s both
        # ways. NICs: DeepSeek-V3 tech report (arXiv 2412.19437) §3.2.2, IB 50 GB/s per GPU,
        # i.e. one 400 Gb/s NIC each; the same section measures NVLink at 160 GB/s of 200.
        "h800": HardwareSpec(
            "h800", 989.0, 80.0, 3.35, 200.0, 50.0, nics_per_node=8, fp32_tflops=494.5,
            fp8_tflops=1979.0,
            efficiency=HOPPER,
            memory_floor_gib=MEMORY_FLOOR["hopper"],
            source="NVIDIA H800 Tensor Core GPU datasheet (SXM5, NVLink 400 GB/s); NICs: "
            "DeepSeek-V3 tech report arXiv 2412.19437 §3.2.2 (IB 50 GB/s per GPU)",
        ),
        # NVIDIA H200 datasheet (SXM): H100's compute with 141 GB HBM3e at 4.8 TB/s. NICs: DGX
        # H200 user guide, the DGX H100 network (8 ConnectX-7 400 Gb/s).
        "h200": HardwareSpec(
            "h200", 989.0, 141.0, 4.8, 450.0, 50.0, nics_per_node=8, fp32_tflops=494.5,
            fp8_tflops=1979.0,
            efficiency=HOPPER,
            memory_floor_gib=MEMORY_FLOOR["hopper"],
            source="NVIDIA H200 Tensor Core GPU datasheet (SXM); NICs: DGX H200 user guide "
            "(8x ConnectX-7 400 Gb/s NDR)",
        ),
        # NVIDIA DGX B200 datasheet: 8 GPUs, 1,440 GB HBM3e at 64 TB/s, FP8 72 PFLOP/s with
        # sparsity (so bf16 dense 72/8/2/2 = 2.25 PFLOP/s per GPU), NVLink5 14.4 TB/s total
        # = 1.8 TB/s per GPU both ways, 8 single-port ConnectX-7 400 Gb/s. (HGX B200 lists
        # 7.7 TB/s per GPU; the DGX figure is kept.)
        "b200": HardwareSpec(
            "b200", 2250.0, 180.0, 8.0, 900.0, 50.0, nics_per_node=8, fp32_tflops=1125.0,
            fp8_tflops=4500.0, mxfp8=True,
            memory_floor_gib=MEMORY_FLOOR["assumed"],
            source="NVIDIA DGX B200 datasheet (8x B200, 1,440 GB, 64 TB/s, NVLink 14.4 TB/s); "
            "NICs: the same datasheet (8x ConnectX-7 400 Gb/s)",
        ),
        # NVIDIA GB200 NVL72 datasheet: 72 GPUs, FP16/BF16 360 PFLOP/s with sparsity (2.5 dense
        # per GPU), 13.4 TB HBM3e at 576 TB/s (186 GB, 8 TB/s per GPU), NVLink5 1.8 TB/s per GPU
        # both ways, all 72 in one NVLink domain. Compute tray = 2 GB200 = 4 GPUs; NICs, not on
        # the datasheet: DGX GB200 user guide, 4 single-port ConnectX-7 400G OSFP per tray.
        "gb200-nvl72": HardwareSpec(
            "gb200-nvl72", 2500.0, 186.0, 8.0, 900.0, 50.0,
            gpus_per_node=4, nics_per_node=4, nvlink_domain=72, fp32_tflops=1250.0,
            fp8_tflops=5000.0, mxfp8=True,
            memory_floor_gib=MEMORY_FLOOR["assumed"],
            source="NVIDIA GB200 NVL72 datasheet (72 GPUs, 360 PFLOP/s sparse BF16, 13.4 TB, "
            "576 TB/s); NICs: DGX GB200 user guide (4x ConnectX-7 400 Gb/s per compute tray)",
        ),
        # AMD Instinct MI300X datasheet: 1,307.4 TFLOP/s bf16 dense, 192 GB HBM3 at 5.3 TB/s,
        # Infinity Fabric 128 GB/s per link both ways; the 8-GPU platform is a full mesh, 7 links
        # per GPU = 7 x 64 = 448 GB/s one way (a single ring uses 2 of them). NICs, not on the
        # datasheet: ROCm MI300X multi-node guides, 8 ConnectX-7 400 Gb/s per node, 1:1.
        "mi300x": HardwareSpec(
            "mi300x", 1307.4, 192.0, 5.3, 448.0, 50.0, nics_per_node=8, fp32_tflops=653.7,
            fp8_tflops=2614.9,
            memory_floor_gib=MEMORY_FLOOR["assumed"],
            source="AMD Instinct MI300X datasheet and MI300X platform (8 GPUs, Infinity Fabric "
            "full mesh); NICs: ROCm multi-node docs (8x ConnectX-7 400 Gb/s per node)",
        ),
        # NVIDIA L40S datasheet: 362.05 TFLOP/s bf16 dense (733 with sparsity), 48 GB GDDR6 at
        # 864 GB/s, no NVLink: GPUs talk over PCIe Gen4 x16, 64 GB/s both ways. NICs, not on the
        # datasheet: NVIDIA Enterprise RA "PCIe Optimized 2-8-5", 4 east-west NICs with 8 x
        # 200 Gb/s ports for 8 GPUs = 25 GB/s per GPU (the fifth NIC is north-south).
        "l40s": HardwareSpec(
            "l40s", 362.05, 48.0, 0.864, 32.0, 25.0, nics_per_node=4, fp32_tflops=183.0,
            fp8_tflops=733.0,
            memory_floor_gib=MEMORY_FLOOR["assumed"],
            source="NVIDIA L40S datasheet (PCIe Gen4 x16, no NVLink); NICs: NVIDIA Enterprise "
            "Reference Architecture PCIe Optimized 2-8-5 (8x 200 Gb/s east-west ports)",
        ),
    }
)
# fmt: on
