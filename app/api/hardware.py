"""Hardware over HTTP, and the profile files the server loads when it is built.

``GET /api/hardware``           every preset and loaded profile: figures, source, kind
``POST /api/hardware/validate`` a profile JSON -> the normalized profile, or 422 naming the field

``load_registry(paths)`` reads each profile file once, in create_app: a bad file stops the
server before it serves anything, with one line naming the file and the field.

The POST body is validated strictly, as /openapi.json types it: "8" is not a number and
true not an integer (pydantic's lax mode took both, issue 26 item 15). A profile file keeps
the lax reading: its numbers are the same, and a file that loads today still loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app import errors
from app.api import query_guard
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.hardware_profile import (
    HardwareProfile,
    ProfileError,
    parse_profile,
    profile_of,
    specs_registry,
)

Registry = Mapping[str, HardwareSpec]


class HardwareProfileFileError(RuntimeError):
    """A profile file the server cannot start with; the message names the file and field."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"hardware profile {path}: {reason}")


def _issues(exc: ValidationError) -> str:
    # One line for every problem: "peak_tflops: Input should be greater than 0; source: ...".
    parts = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e["loc"])
        parts.append(f"{where}: {e['msg']}" if where else e["msg"])
    return "; ".join(parts)


def _read(path: Path) -> HardwareProfile:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise HardwareProfileFileError(path, f"cannot be read ({exc.strerror})") from None
    try:
        return parse_profile(text)
    except ValidationError as exc:
        raise HardwareProfileFileError(path, _issues(exc)) from None


def load_registry(paths: Sequence[Path]) -> Registry:
    """The built-in presets plus one profile per file, in order; any bad file raises."""
    registry: Registry = HARDWARE
    origin: dict[str, Path] = {}
    for path in paths:
        profile = _read(path)
        if profile.name in origin:
            reason = f"name: {profile.name!r} is also the profile in {origin[profile.name]}"
            raise HardwareProfileFileError(path, reason)
        try:
            registry = specs_registry({profile.name: profile.to_spec()}, registry)
        except ProfileError as exc:
            raise HardwareProfileFileError(path, str(exc)) from None
        origin[profile.name] = path
    return registry


def get_registry(request: Request) -> Registry:
    return request.app.state.hardware


RegistryDep = Annotated[Registry, Depends(get_registry)]
router = APIRouter(
    prefix="/api/hardware", tags=["hardware"], dependencies=[Depends(query_guard.declared_only)]
)


def _entry(spec: HardwareSpec) -> dict[str, Any]:
    # domain_size is sent, not derived on the page: the JS looks numbers up, never computes.
    kind = "builtin" if HARDWARE.get(spec.name) is spec else "profile"
    return profile_of(spec).model_dump() | {"kind": kind, "domain_size": spec.domain_size}


@router.get("", summary="Every hardware preset and loaded profile, with figures and source")
def list_hardware(registry: RegistryDep) -> dict[str, list[dict[str, Any]]]:
    return {"hardware": [_entry(spec) for spec in registry.values()]}


def _whole(data: Any, model: type[BaseModel]) -> Any:
    """JSON Schema's integer is a number without a fraction (8.0 is one); strict mode takes
    only 8, so such numbers become ints first, in ``model``'s integer fields only."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for name, field in model.model_fields.items():
        value = out.get(name)
        if field.annotation is int and type(value) is float and value.is_integer():
            out[name] = int(value)
    return out


def _why(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ValueError) else "nested too deep"


async def strict_profile(request: Request) -> HardwareProfile:
    """The body as a HardwareProfile, each field of the JSON type the schema gives it."""
    try:
        data = await request.json()
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep: a 422
        raise RequestValidationError(
            [{"loc": ("body",), "msg": f"is not valid JSON ({_why(exc)})", "type": "json_invalid"}]
        ) from None
    try:
        return HardwareProfile.model_validate(_whole(data, HardwareProfile), strict=True)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        ) from None


BODY = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HardwareProfile"}}},
}


@router.post(
    "/validate",
    summary="Check a hardware profile; 200 with the normalized profile",
    response_model=HardwareProfile,
    responses=errors.responses(
        422, why={422: "The profile is invalid; `detail[].loc` names the field"}
    ),
    openapi_extra={"requestBody": BODY},
)
def validate_profile(
    profile: Annotated[HardwareProfile, Depends(strict_profile)], registry: RegistryDep
) -> HardwareProfile:
    if profile.name in registry:
        taken = "a built-in preset" if profile.name in HARDWARE else "a loaded profile"
        reason = f"{profile.name!r} is already {taken}; a profile may not replace it"
        raise RequestValidationError(
            [{"loc": ("body", "name"), "msg": reason, "type": "value_error"}]
        )
    return profile
