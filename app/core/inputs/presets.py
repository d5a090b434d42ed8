"""The named presets in one place for callers: models (app.core.inputs.models, the
mixture-of-experts ones from app.core.inputs.moe_models) and hardware (app.core.inputs.hardware)."""

from types import MappingProxyType

from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.models import MODELS as _DENSE
from app.core.inputs.models import ModelSpec
from app.core.inputs.moe_models import MOE_MODELS

MODELS: MappingProxyType[str, ModelSpec] = MappingProxyType({**_DENSE, **MOE_MODELS})

__all__ = ["HARDWARE", "MODELS", "MOE_MODELS", "Efficiency", "HardwareSpec", "ModelSpec"]
