"""The named presets in one place for callers: models (app.core.models) and hardware
(app.core.hardware)."""

from app.core.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.models import MODELS, ModelSpec

__all__ = ["HARDWARE", "MODELS", "Efficiency", "HardwareSpec", "ModelSpec"]
