"""A hardware profile as JSON: every HardwareSpec figure, validated, and the registry it joins.

Pure: parsing text and merging mappings. Reading the files is app/api/hardware.py's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator

from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.scenario import MAX_WORLD

# A name is what a scenario's hardware= carries: short, lowercase, safe in a URL.
NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
_DEFAULT = Efficiency()  # frozen: its defaults are the profile's defaults
_STRICT = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, str_strip_whitespace=True)


class ProfileError(ValueError):
    """A profile that parses but cannot join the registry, reported against one field."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def _efficiency_bound(name: str) -> dict[str, float]:
    """Bounds by what a constant measures, so a constant added to Efficiency is bounded too."""
    if name.endswith("busbw_fraction"):
        # Bus bandwidth may read above the link rate when the switch reduces in-network
        # (NVLink SHARP sends each byte once), hence up to 2, not 1.
        return {"gt": 0, "le": 2}
    if name.endswith("_fraction"):
        return {"gt": 0, "le": 1}  # a sustained fraction of a peak cannot exceed the peak
    if name.endswith("_us"):
        return {"ge": 0, "le": 1e4}  # a latency: at most 10 ms per step
    return {"gt": 0, "le": 1e6}


# Efficiency's constants, each optional (Efficiency()'s value when left out): built from the
# dataclass so the profile and the cost model can never disagree on which constants exist.
EfficiencyProfile = create_model(
    "EfficiencyProfile",
    __config__=_STRICT,
    **{
        f.name: (float, Field(getattr(_DEFAULT, f.name), **_efficiency_bound(f.name)))
        for f in fields(Efficiency)
    },
)


class HardwareProfile(BaseModel):
    """One GPU platform: the figures of HardwareSpec, each bounded, and where they come from.

    Maxima sit one to two orders above the largest preset (GB200 NVL72) so a typo in units
    (GB/s for TB/s, bits for bytes) is caught instead of modelled.
    """

    model_config = _STRICT

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN)
    peak_tflops: float = Field(gt=0, le=1e5, description="dense BF16 tensor-core peak per GPU")
    hbm_gib: float = Field(gt=0, le=1e4, description="GPU memory per GPU, GiB")
    hbm_tbps: float = Field(gt=0, le=1e3, description="GPU memory bandwidth, TB/s")
    intra_gbps: float = Field(gt=0, le=1e5, description="scale-up GB/s per GPU, one way")
    inter_gbps: float = Field(gt=0, le=1e5, description="scale-out NIC GB/s per GPU, one way")
    gpus_per_node: int = Field(8, ge=1, le=1024)
    nics_per_node: int = Field(8, ge=1, le=1024, description="east-west NICs per node")
    nvlink_domain: int = Field(
        0, ge=0, le=MAX_WORLD, description="GPUs on one scale-up fabric; 0 = one node"
    )
    source: str = Field(min_length=1, max_length=500, description="where the figures come from")
    fp32_tflops: float = Field(
        0.0, ge=0, le=1e5, description="fp32 (TF32) GEMM peak per GPU; 0 = peak_tflops"
    )
    memory_floor_gib: float = Field(
        0.0, ge=0, le=1e4,
        description="per-process GiB outside the allocator (CUDA context, NCCL); 0 = none",
    )  # fmt: skip
    fp8_tflops: float = Field(
        0.0, ge=0, le=1e5, description="dense FP8 tensor-core peak per GPU; 0 = no FP8"
    )
    mxfp8: bool = Field(False, description="MX block scaling in hardware (Blackwell)")
    efficiency: EfficiencyProfile = Field(default_factory=EfficiencyProfile)

    @field_validator("nvlink_domain")
    @classmethod
    def _domain_is_whole_nodes(cls, domain: int, info: ValidationInfo) -> int:
        # The cost model has one level inside a domain, so a domain is made of whole nodes.
        per_node = info.data.get("gpus_per_node")  # absent when it failed its own check
        if domain and per_node and domain % per_node:
            raise ValueError(f"must be 0 or a multiple of gpus_per_node ({per_node})")
        return domain

    @field_validator("memory_floor_gib")
    @classmethod
    def _floor_below_hbm(cls, floor: float, info: ValidationInfo) -> float:
        hbm = info.data.get("hbm_gib")  # absent when it failed its own check
        if hbm is not None and floor >= hbm:
            raise ValueError(f"must be below hbm_gib ({hbm} GiB): the floor leaves no memory")
        return floor

    def to_spec(self) -> HardwareSpec:
        figures = self.model_dump(exclude={"efficiency"})
        return HardwareSpec(**figures, efficiency=Efficiency(**self.efficiency.model_dump()))


def profile_of(spec: HardwareSpec) -> HardwareProfile:
    """The profile that describes a spec: how built-ins are listed beside loaded profiles."""
    return HardwareProfile.model_validate(asdict(spec))


def parse_profile(text: str | bytes) -> HardwareProfile:
    """A profile from JSON text; a ValidationError names every field that is wrong."""
    return HardwareProfile.model_validate_json(text)


def specs_registry(
    extra: Mapping[str, HardwareSpec], base: Mapping[str, HardwareSpec] = HARDWARE
) -> Mapping[str, HardwareSpec]:
    """The presets in base and the profiles in extra as one read-only mapping, base first.

    A profile may not take a preset's name: the hardware a shared link names must mean the
    same figures on every server.
    """
    for key, spec in extra.items():
        if key in base:
            raise ProfileError("name", f"{key!r} is already a hardware preset; rename the profile")
        if spec.name != key:
            raise ProfileError("name", f"profile {spec.name!r} is keyed as {key!r}")
    return MappingProxyType({**base, **extra})
