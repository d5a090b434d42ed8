"""Find and read Kineto trace files (``*.json``, ``*.json.gz``) for app.core.traces.

One file is read at a time, and only its RankTrace (the spans of interest) is kept, so an
import holds one file's JSON, not every rank's. A file over MAX_FILE_BYTES is refused before
it is read: json.load holds a file's objects several times its size.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable
from pathlib import Path

from app.core.traces import RankTrace, TraceError, parse_rank

SUFFIXES = (".json", ".json.gz")
MAX_FILE_BYTES = 1 << 30  # 1 GiB on disk (compressed or not); json.load needs several times it


def trace_paths(inputs: Iterable[str | Path]) -> list[Path]:
    """The trace files named, and those directly inside the directories named, sorted."""
    out: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            out += sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(SUFFIXES))
        elif path.is_file():
            out.append(path)
        else:
            raise TraceError(f"{path}: no such file or directory")
    if not out:
        raise TraceError("no trace files (*.json, *.json.gz) in " + ", ".join(map(str, inputs)))
    return out


def load(path: Path) -> object:
    """The parsed JSON of one trace file; TraceError naming it when it cannot be read."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise TraceError(f"{path}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit per file")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return json.load(f)
        with path.open("rb") as f:
            return json.load(f)
    except (OSError, EOFError, zlib.error) as err:
        raise TraceError(f"{path}: cannot be read ({err}); a truncated .gz?") from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise TraceError(f"{path}: is not JSON ({err})") from err


def read_traces(paths: list[Path]) -> list[RankTrace]:
    """One RankTrace per file; refuses duplicate ranks and files of different world sizes."""
    traces: list[RankTrace] = []
    by_rank: dict[int, Path] = {}
    for path in paths:
        trace = parse_rank(load(path), str(path))
        if trace.rank in by_rank:
            raise TraceError(f"{path}: rank {trace.rank} again (also in {by_rank[trace.rank]})")
        if traces and trace.world != traces[0].world:
            raise TraceError(f"{path}: world_size {trace.world}, but {traces[0].name} has "
                             f"{traces[0].world}: not one run")  # fmt: skip
        by_rank[trace.rank] = path
        traces.append(trace)
    return traces
