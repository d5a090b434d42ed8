"""JSON in pieces, byte for byte what one ``json.dumps`` (JSONResponse's encoding) gives:
``json.dumps`` holds the GIL for the whole call, so a 30 MB view model dumped at once would
stop the event loop for most of a second (bench/bench_heavy.py). Dicts go key by key and long
lists ITEMS_PER_DUMP items at a time, so the GIL is let go between pieces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

# List items per json.dumps call, and bytes gathered before a piece is sent.
ITEMS_PER_DUMP = 1_000
PIECE_BYTES = 64 * 1024


def dumps(value: Any) -> str:
    # JSONResponse's own encoding (starlette/responses.py: JSONResponse.render).
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def json_parts(value: Any) -> Iterator[str]:
    """``dumps(value)`` in parts: dicts key by key, long lists ITEMS_PER_DUMP at a time."""
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + dumps(str(key)) + ":"
            yield from json_parts(item)
        yield "}"
    elif isinstance(value, list) and len(value) > ITEMS_PER_DUMP:
        yield "["
        for i in range(0, len(value), ITEMS_PER_DUMP):
            yield ("," if i else "") + dumps(value[i : i + ITEMS_PER_DUMP])[1:-1]
        yield "]"
    else:
        yield dumps(value)


def json_pieces(value: Any) -> Iterator[bytes]:
    """``json_parts`` gathered into pieces of about PIECE_BYTES, each one send."""
    buf: list[str] = []
    size = 0
    for part in json_parts(value):
        buf.append(part)
        size += len(part)
        if size >= PIECE_BYTES:
            yield "".join(buf).encode()
            buf, size = [], 0
    if buf:
        yield "".join(buf).encode()
