"""POST /api/model/from-hf-config: a model's config.json in, the scenario query out.

The URL is the page's state, so the answer is the query fields (``model=custom`` and the
shape) and a link made of them; a page merges them into its own query and navigates. The
body is read in pieces and refused past MAX_BODY_BYTES before any of it is parsed.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.core.inputs.hf_config import ARCHITECTURES, MODEL_TYPES, HFConfigError, imported
from app.core.inputs.scenario import CUSTOM_MODEL
from app.errors import issue, responses, unprocessable

# A config.json is 1-2 KB; one that lists every layer's type is still under 20 KB.
MAX_BODY_BYTES = 256 * 1024
TOO_LARGE = f"the config is larger than {MAX_BODY_BYTES // 1024} KB; a config.json is a few KB"

router = APIRouter(tags=["model"])
JSON = "application/json"
# The outline hf_config.architecture() needs: a supported class in "architectures", or a
# known "model_type"; the keys each architecture then reads are Hugging Face's.
CONFIG_SCHEMA = {
    "type": "object",
    "anyOf": [
        {
            "required": ["architectures"],
            "properties": {
                "architectures": {
                    "type": "array", "minItems": 1, "items": {"enum": list(ARCHITECTURES)},
                },
            },
        },
        {
            "required": ["model_type"],
            "properties": {"model_type": {"enum": list(MODEL_TYPES)}},
            "not": {"required": ["architectures"]},
        },
    ],
}  # fmt: skip


class _TooLarge(Exception):
    pass


async def _read_capped(request: Request) -> bytes:
    """The body, or _TooLarge as soon as it (or its declared length) passes the cap."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(raw: bytes) -> dict[str, Any]:
    """The JSON object, or HFConfigError against "body" saying what is wrong with it."""
    try:
        cfg = json.loads(raw)
    except RecursionError:
        raise HFConfigError("body", "is nested too deeply to be a config.json") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both
        raise HFConfigError("body", f"is not valid JSON ({exc})") from None
    if not isinstance(cfg, dict):
        raise HFConfigError("body", "must be a JSON object: the model's config.json")
    return cfg


def _url_value(value: object) -> str:
    # The Scenario reads booleans as the URL spells them elsewhere: true / false.
    return str(value).lower() if isinstance(value, bool) else str(value)


def answer(cfg: dict[str, Any]) -> dict[str, Any]:
    got = imported(cfg)
    query = {"model": CUSTOM_MODEL, **got.fields}
    return {
        "query": query,
        "url": "/?" + urlencode({k: _url_value(v) for k, v in query.items()}),
        "from_config": got.keys,  # each field the file set, and the key it came from
        "context_length": got.context_length,
    }


@router.post(
    "/api/model/from-hf-config",
    summary="A Hugging Face config.json -> the scenario query fields of its model",
    description=(
        "Body: the model's config.json as it is (Llama, Mistral, Qwen2, Qwen3, GPT-2, OPT, "
        f"BLOOM, GPT-NeoX; dense only; at most {MAX_BODY_BYTES // 1024} KB). Answers "
        "`query` (model=custom and the shape fields the file sets), `url`, the overview with "
        "that query, `from_config` (each field and the config key it came from) and "
        "`context_length` (the longest context the model serves). A config.json does not "
        "say the training length: seq_len is set only by a learned position table (GPT-2, "
        "OPT); a page keeps its own, capped at `context_length`. A key that cannot be "
        'imported is a 422 whose `detail[].loc` is `["body", key]`.'
    ),
    response_model=dict[str, Any],
    responses=responses(
        413, 422, why={422: 'A key cannot be imported; `detail[].loc` is `["body", key]`'}
    ),
    openapi_extra={"requestBody": {"required": True, "content": {JSON: {"schema": CONFIG_SCHEMA}}}},
)
async def import_hf_config(request: Request) -> JSONResponse:
    try:
        raw = await _read_capped(request)
    except _TooLarge:
        return JSONResponse(status_code=413, content={"detail": [issue(["body"], TOO_LARGE)]})
    try:
        body = answer(_parse(raw))
    except HFConfigError as exc:
        loc = ["body"] if exc.key == "body" else ["body", exc.key]
        return unprocessable([issue(loc, exc.reason)])
    return JSONResponse(body)
