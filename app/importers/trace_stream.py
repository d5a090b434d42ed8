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
_NOT_WS = re.compile(r"[^ \t\r\n]")


class NotATrace(ValueError):
    """The text is not a JSON object, or not one a trace could be."""


class _Reader:
    def __init__(self, f: IO[str]) -> None:
        self.f, self.buf, self.pos, self.eof = f, "", 0, False
        self.decoder = json.JSONDecoder()

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.f.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk  # drop what was consumed
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end)."""
        while True:
            found = _NOT_WS.search(self.buf, self.pos)  # in C: Kineto indents every event
            if found:
                self.pos = found.start()
                return self.buf[self.pos]
            self.pos = len(self.buf)
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


def events(f: IO[str], header: dict) -> Iterator[object]:
    """Yield the elements of the top-level ``traceEvents`` array; every other top-level field
    goes into ``header`` (those after the array once the last event has been yielded)."""
    r = _Reader(f)
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
