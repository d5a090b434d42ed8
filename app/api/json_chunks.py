"""JSON in pieces, byte for byte what one ``json.dumps`` (JSONResponse's encoding) gives:
``json.dumps`` holds the GIL for the whole call, so a 30 MB view model dumped at once would
stop the event loop for most of a second (bench/bench_heavy.py). Dicts go key by key and long
lists ITEMS_PER_DUMP items at a time, so the GIL is let go between pieces."""

from __future__ import annotations

import codecs
import json
import re
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
    elif isinstance(value, list) and (len(value) > ITEMS_PER_DUMP or any(map(_long, value))):
        yield "["
        for i in range(0, len(value), ITEMS_PER_DUMP):
            yield from _batch(value[i : i + ITEMS_PER_DUMP], i > 0)
        yield "]"
    else:
        yield dumps(value)


def _long(item: Any) -> bool:
    """A container too long for one dumps call (e.g. one stage's 10k activation steps)."""
    return isinstance(item, list | dict) and len(item) > ITEMS_PER_DUMP


def _batch(items: list[Any], after: bool) -> Iterator[str]:
    """Up to ITEMS_PER_DUMP list items, in one dumps call unless one of them is long."""
    if not any(map(_long, items)):
        yield ("," if after else "") + dumps(items)[1:-1]
        return
    for j, item in enumerate(items):
        yield "," if after or j else ""
        yield from json_parts(item)


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


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
# Containers this deep are parsed one member at a time; deeper values in one C call each.
# The scenario's big lists (timeline.events, schedule.actions) sit at depth 2.
PARTS_DEPTH = 3


def loads_in_parts(text: str | bytes) -> Any:
    """``json.loads(text)``, but the top containers member by member: one ``json.loads`` of
    a 34 MB view model holds the GIL for 0.6 s, and the event loop with it."""
    if isinstance(text, bytes):
        text = _decode_in_parts(text)
    value, end = _parse(text, _SPACE.match(text, 0).end(), PARTS_DEPTH)
    if _SPACE.match(text, end).end() != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _decode_in_parts(data: bytes) -> str:
    # One decode of 34 MB holds the GIL for tens of ms; an incremental decoder keeps a
    # character split across two pieces whole.
    decoder = codecs.getincrementaldecoder("utf-8")()
    step = PIECE_BYTES * 16
    parts = [decoder.decode(data[i : i + step]) for i in range(0, len(data), step)]
    return "".join(parts) + decoder.decode(b"", final=True)


def _parse(s: str, i: int, depth: int) -> tuple[Any, int]:
    opener = s[i : i + 1]
    if depth == 0 or opener not in ("{", "["):
        return _DECODER.raw_decode(s, i)
    closer = "}" if opener == "{" else "]"
    out: Any = {} if opener == "{" else []
    i = _SPACE.match(s, i + 1).end()
    if s[i : i + 1] == closer:
        return out, i + 1
    while True:
        if opener == "{":
            key, i = _DECODER.raw_decode(s, i)
            i = _expect(s, i, ":")
            out[key], i = _parse(s, i, depth - 1)
        else:
            item, i = _parse(s, i, depth - 1)
            out.append(item)
        i = _SPACE.match(s, i).end()
        if s[i : i + 1] == closer:
            return out, i + 1
        i = _expect(s, i, ",")


def _expect(s: str, i: int, char: str) -> int:
    i = _SPACE.match(s, i).end()
    if s[i : i + 1] != char:
        raise json.JSONDecodeError(f"Expecting '{char}' delimiter", s, i)
    return _SPACE.match(s, i + 1).end()
