"""The named presets in one place for callers: models (app.core.inputs.models) and hardware
(app.core.inputs.hardware)."""

from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.models import MODELS, ModelSpec

__all__ = ["HARDWARE", "MODELS", "Efficiency", "HardwareSpec", "ModelSpec"]
