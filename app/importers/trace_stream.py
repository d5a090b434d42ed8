"""Read a trace file's events one at a time, so memory is bounded by one event and a read
chunk, not by the file: ``json.load`` of a 9.8 MB trace held 48 MiB; a 200 MB one would
hold about a gigabyte.

The stdlib has no streaming JSON parser, but ``JSONDecoder.raw_decode`` decodes one value
at a position of a string: this walks the top-level object, decodes every field but
``traceEvents`` whole into ``header``, and yields the ``traceEvents`` array's elements one by
one, reading more of the file whenever a value runs past the end of what was read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO

CHUNK = 1 << 20  # characters read at a time
MAX_VALUE = 64 << 20  # characters of one value: no trace event comes near it
# Characters of one file's JSON: what a .gz may unpack to. A bound on the time an import
# takes (about 17 MB a CPU-second, bench/bench_import_scale.py), not on memory: a 1.6 GB
# .json.gz of a real trace unpacks to less; a .gz bomb of a few MB would unpack forever.
MAX_TEXT = 16 << 30
_WS = re.compile(r"[ \t\r\n]*")  # a run of it in C, ~3x faster than searching past it


class NotATrace(ValueError):
    """The text is not a JSON object, or not one a trace could be."""


class TooLong(ValueError):
    """The file's text runs past the bound the reader was given."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"over {limit} characters")
        self.limit = limit


class _Reader:
    def __init__(self, f: IO[str], limit: int) -> None:
        self.f, self.buf, self.pos, self.eof = f, "", 0, False
        self.decoder = json.JSONDecoder()
        self.left = limit  # characters still allowed
        self.limit = limit

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.left -= len(chunk)
        if self.left < 0:
            raise TooLong(self.limit)
        self.buf = self.buf[self.pos :] + chunk  # drop what was consumed
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # in C: Kineto indents every event
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = self.peek() or "the end of the file"
            raise NotATrace(f"expected {char!r} at character {self.pos}, found {found!r}")
        self.pos += 1

    def separator(self, close: str) -> None:
        """Past the comma after a member; at the closing bracket, stay there."""
        if self.peek() == ",":
            self.pos += 1
        elif self.peek() != close:
            raise NotATrace(f"expected ',' or {close!r} at character {self.pos}")

    def value(self) -> object:
        """One JSON value, reading on while it runs past the buffer."""
        self.peek()
        while True:
            try:
                obj, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                # Cut by the buffer's end, most likely: read on and retry, up to a bound, so
                # a broken file is not read whole into memory before it is refused.
                if len(self.buf) - self.pos < MAX_VALUE and self._more():
                    continue
                raise NotATrace(f"{err.msg} at character {self.pos + err.pos}") from err
            if end == len(self.buf) and self._more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return obj


def events(f: IO[str], header: dict, limit: int = MAX_TEXT) -> Iterator[object]:
    """Yield the elements of the top-level ``traceEvents`` array; every other top-level field
    goes into ``header`` (those after the array once the last event has been yielded).
    TooLong once more than ``limit`` characters have been read."""
    r = _Reader(f, limit)
    r.expect("{")
    seen_events = False
    while r.peek() != "}":
        key = r.value()
        if not isinstance(key, str):
            raise NotATrace("a top-level key is not a string")
        r.expect(":")
        if key == "traceEvents" and r.peek() == "[":
            seen_events = True
            r.expect("[")
            while r.peek() != "]":
                yield r.value()
                r.separator("]")
            r.expect("]")
        else:
            header[key] = r.value()
        r.separator("}")
    r.expect("}")
    if not seen_events:
        raise NotATrace("no traceEvents array")
