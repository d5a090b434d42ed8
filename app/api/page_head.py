"""A big view model's page head: the model without its two big lists (the timeline's events
and the schedule's actions), which is all a page's server side reads of it (the layout, the
schedule's counts, the bubble fraction), while the page embeds the whole model as the cache's
bytes (page_data.json_for_script). Parsing 26 MB of events in the server to read a handful of
numbers held its GIL for most of an overview miss (bench_heavy's pages, py-spy --gil)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.api.json_chunks import json_pieces

# (key, key inside it) of the lists that make a view model big.
BIG = (("timeline", "events"), ("schedule", "actions"))
# Under this a body is parsed whole (scenario_cache.PARSE_WHOLE_BYTES): no head kept.
HEAD_FROM_BYTES = 1 << 20
SEPARATOR = b"\n"  # compact JSON holds no raw newline: the head follows the body after one


def head_of(model: dict[str, Any]) -> dict[str, Any]:
    """``model`` without BIG's lists (shallow copies; the model itself is left whole)."""
    out = dict(model)
    for outer, inner in BIG:
        if isinstance(out.get(outer), dict) and inner in out[outer]:
            out[outer] = {k: v for k, v in out[outer].items() if k != inner}
    return out


def pieces_with_head(model: dict[str, Any]) -> Iterator[bytes]:
    """The model's JSON in pieces; past HEAD_FROM_BYTES, SEPARATOR and its head's JSON."""
    size = 0
    for piece in json_pieces(model):
        size += len(piece)
        yield piece
    if size >= HEAD_FROM_BYTES:
        yield SEPARATOR + b"".join(json_pieces(head_of(model)))


def split(blob: bytes) -> tuple[bytes, bytes | None]:
    """(body, head or None) of what pieces_with_head made."""
    body, sep, head = blob.partition(SEPARATOR)
    return body, (head if sep else None)
