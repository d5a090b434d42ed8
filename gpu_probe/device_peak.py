"""The device's peak dense TFLOP/s at the run's dtype, so the server can report MFU.

Given with ``--peak-tflops``; otherwise read off the CUDA device's name against the app's
hardware presets (app/core/inputs/hardware.py, each citing its datasheet), for bf16 only: their
peaks are dense BF16. A CPU, an fp32 run or an unknown GPU records none, and the server then
reports no MFU rather than a wrong one.
"""

from __future__ import annotations

from app.core.inputs.hardware import HARDWARE

# Device-name fragment -> preset, most specific first ("H100 NVL" has no preset: not matched).
NAME_TO_PRESET = (
    ("GB200", "gb200-nvl72"),
    ("B200", "b200"),
    ("H200", "h200"),
    ("H800", "h800"),
    ("H100 80GB HBM3", "h100-sxm"),
    ("H100 SXM", "h100-sxm"),
    ("A100", "a100-80g"),  # 40 and 80 GB share the peak
    ("MI300X", "mi300x"),
    ("L40S", "l40s"),
)


def peak_tflops(device: str, dtype: str, name: str | None, given: float | None) -> float | None:
    if given is not None:
        return given
    if device != "cuda" or dtype != "bf16" or not name:
        return None
    for fragment, preset in NAME_TO_PRESET:
        if fragment in name:
            return HARDWARE[preset].peak_tflops
    return None
