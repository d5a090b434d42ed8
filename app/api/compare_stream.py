"""The comparison as NDJSON, one line per piece, so a page draws each column as it comes.

A schedules comparison at pp=16 and 256 micro-batches is eleven big evaluations: sent whole,
nothing can be drawn for seconds (issue 28, "fast at real sizes"). Sent as lines, the first
column is on screen once it alone is evaluated:

    {"head": {preset, base, urlquery, limits}}
    {"member": <column, as /api/compare's members[i], with its error band>}   (one per member)
    {"tail": {verdicts, winner, time_axis, diff}}

``verdicts`` give each valid column's ``why``, ``best`` and ``ranked``, which need every
column. Asked for with ``Accept: application/x-ndjson``; a refusal is still a 422 before
any line, since explicit scenarios are all evaluated before the head.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from fastapi import Request

from app.api.compression import DYNAMIC_LEVEL, VARY, accepts_gzip
from app.core.evaluate import compare
from app.core.evaluate.one_scenario import Registry
from app.core.inputs.scenario import Scenario

NDJSON = "application/x-ndjson"


def wanted(request: Request) -> bool:
    """Whether the client asked for lines (the compare page does; a plain GET gets JSON)."""
    return NDJSON in request.headers.get("accept", "")


def headers(request: Request) -> dict[str, str]:
    """gzip when the client takes it. The stream compresses itself (``lines``): the app's
    GZipMiddleware would hold each line's last bytes in its compressor until the next line,
    so a column would wait for the next one's evaluation; it passes a response through when
    it already has a Content-Encoding."""
    gz = accepts_gzip(request.headers.get("accept-encoding", ""))
    return {"Content-Encoding": "gzip" if gz else "identity", **VARY}


def lines(
    req: compare.Request, registry: Registry, board: Any, gzipped: bool = False
) -> Iterator[bytes]:
    """The lines' iterator, its first piece made now: an explicit member the core refuses
    raises CompareError here, before the response starts."""
    parts = compare.stream(req, registry)
    first = next(parts)
    encoded = _encoded(chain([first], parts), board)
    return _gzip_each(encoded) if gzipped else encoded


def _gzip_each(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """One gzip stream, flushed after every line so the browser can inflate each at once
    (zlib's Z_SYNC_FLUSH ends a deflate block on a byte boundary: RFC 1951, section 3.2.4)."""
    packer = zlib.compressobj(DYNAMIC_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for chunk in chunks:
        yield packer.compress(chunk) + packer.flush(zlib.Z_SYNC_FLUSH)
    yield packer.flush()


def _encoded(parts: Iterable[tuple[str, Any]], board: Any) -> Iterator[bytes]:
    for kind, value in parts:
        if kind == "member" and value["valid"]:
            scenario = Scenario.model_validate(value["query"])
            value["error_band"] = board.band(scenario, value["summary"]["fits"])
        yield json.dumps({kind: value}, allow_nan=False, separators=(",", ":")).encode() + b"\n"
