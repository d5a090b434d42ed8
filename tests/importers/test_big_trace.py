"""Big files (issue 25, Bad input: "a 2 GB file"): a 2 GiB trace is streamed in bounded
memory (the file is made as it is read, so the test needs no disk: one step, its events 2 GiB
of whitespace apart); a .gz that unpacks past the reader's bound (a few MB of gzip members),
and a file over the per-file cap on disk (a sparse file: no disk either), are refused naming
the file and why, the last before a byte of it is read. The upload route refuses a body
over its cap (1 GiB by default) with 413 (tests/importers/test_upload_api.py)."""

import gzip
import io
import json
import os
import tracemalloc

import pytest

from app.core.traces import TraceError
from app.importers.trace_files import MAX_FILE_BYTES, parse, read

pytestmark = pytest.mark.timeout(300)
PAD = 16 << 20  # spaces in one gzip member
STEP = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 0, "dur": 1000,
        "pid": 1, "tid": 1}  # fmt: skip
HEADER = {"distributedInfo": {"rank": 0, "world_size": 1}}


def bomb(pad_bytes: int) -> io.BytesIO:
    """A .json.gz of one step whose events are ``pad_bytes`` of whitespace apart: gzip
    members, one after another, are one stream (RFC 1952 section 2.2), so the padding is one
    small member repeated."""
    head = gzip.compress(b'{"traceEvents": [' + json.dumps(STEP).encode() + b",")
    pad = gzip.compress(b" " * PAD, 9)
    tail = b'{"ph": "i", "name": "end"}], ' + json.dumps(HEADER).encode()[1:]
    return io.BytesIO(head + pad * (pad_bytes // PAD) + gzip.compress(tail))


class Padded(io.RawIOBase):
    """The trace file ``head``, ``pad_bytes`` spaces, ``tail``, made as it is read."""

    def __init__(self, head: bytes, pad_bytes: int, tail: bytes) -> None:
        self.parts, self.pad = [head, tail], pad_bytes

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.parts[0]:
            part, self.parts[0] = self.parts[0], b""
        elif self.pad:
            n = min(len(b), self.pad)
            self.pad -= n
            b[:n] = b" " * n
            return n
        else:
            part, self.parts[1] = self.parts[1], b""
        b[: len(part)] = part  # both parts are far shorter than a read
        return len(part)


def test_a_2gib_trace_streams_in_memory_bounded_by_a_read_chunk():
    head = b'{"traceEvents": [' + json.dumps(STEP).encode() + b","
    tail = b'{"ph": "i", "name": "end"}], ' + json.dumps(HEADER).encode()[1:]
    raw = io.BufferedReader(Padded(head, 2 << 30, tail), 1 << 20)
    tracemalloc.start()
    try:
        trace = parse(raw, "rank0_trace.json", gz=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (trace.rank, [st.step for st in trace.steps]) == (0, [3])
    assert peak < 32 << 20, f"{peak / 2**20:.0f} MiB held while reading 2 GiB"


def test_a_gz_that_unpacks_past_the_bound_is_refused_naming_it():
    with pytest.raises(TraceError) as err:
        parse(bomb(64 << 20), "rank0_trace.json.gz", gz=True, limit=32 << 20)
    assert err.value.key == "unpacks_too_big"
    assert str(err.value).startswith("rank0_trace.json.gz: unpacks to over 33554432 characters")


def test_a_file_over_the_cap_on_disk_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "rank0_trace.json"
    with path.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no block of it is written
    assert os.stat(path).st_blocks == 0
    with pytest.raises(TraceError) as err:
        read(path)
    assert err.value.key == "too_big"
    assert str(err.value) == (f"{path}: {MAX_FILE_BYTES + 1} bytes is over the "
                              f"{MAX_FILE_BYTES}-byte limit per file")  # fmt: skip
