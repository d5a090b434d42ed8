"""Find and read Kineto trace files (``*.json``, ``*.json.gz``) for app.core.traces.

One file is read at a time, its events streamed one by one (trace_stream.py), and only its
RankTrace (the spans of interest) is kept, in a spill file (trace_spill.py): an import holds
one event and one file's spans, never a whole file's JSON nor every rank's spans. A file
over MAX_FILE_BYTES is refused before it is read, and one whose text (a .gz unpacked) runs
past MAX_TEXT characters as soon as it does (trace_stream.py). A ``.tar`` named among them
is read member by member (trace_tar.py).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from app.core.traces import RankTrace, TraceError
from app.core.traces.kineto import parse_events
from app.core.traces.refusals import refuse
from app.importers.cycles import cycle_of, files_in
from app.importers.log_files import GZIP_MAGIC
from app.importers.trace_spill import SpilledTraces
from app.importers.trace_stream import MAX_TEXT, NotATrace, TooLong, events
from app.importers.trace_tar import is_tar, read_tar

SUFFIXES = (".json", ".json.gz")
MAX_FILE_BYTES = 4 << 30  # 4 GiB on disk: a bound on the time an import takes, not memory


def trace_paths(inputs: Iterable[str | Path]) -> list[Path]:
    """The trace files named, and those directly inside the directories named, sorted."""
    out: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            out += files_in(path, SUFFIXES)  # and its profiling cycles' (cycles.py)
        elif path.is_file():
            out.append(path)
        else:
            raise TraceError(f"{path}: no such file or directory")
    if not out:
        raise TraceError("no trace files (*.json, *.json.gz) in " + ", ".join(map(str, inputs)))
    return out


def read(path: Path) -> RankTrace:
    """One file's RankTrace, its events streamed (trace_stream.py); TraceError naming the
    file when it cannot be read or is not a trace."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise refuse("too_big", file=str(path), size=size, limit=MAX_FILE_BYTES)
    with open(path, "rb") as f:
        return parse(f, str(path), path.name.endswith(".gz"))


def parse(raw, name: str, gz: bool, limit: int = MAX_TEXT) -> RankTrace:
    """One trace's RankTrace from a binary file (on disk, or a tar member), named ``name``
    in every refusal; at most ``limit`` characters of its text are read."""
    header: dict = {}
    gz = gz or _peek(raw, 2) == GZIP_MAGIC  # by its bytes too, as log_files.compressed
    try:
        with io.TextIOWrapper(gzip.GzipFile(fileobj=raw) if gz else raw, encoding="utf-8") as f:
            return parse_events(header, events(f, header, limit), name)
    except TooLong as err:
        raise refuse("unpacks_too_big", file=name, limit=err.limit) from err
    except (OSError, EOFError, zlib.error) as err:
        raise refuse("unreadable", file=name, error=str(err)) from err
    except (NotATrace, UnicodeDecodeError) as err:
        raise refuse("not_trace", file=name, error=str(err)) from err


def _peek(raw, n: int) -> bytes:
    """The first ``n`` bytes of ``raw``, left unread (a buffered file or tar member peeks)."""
    peek = getattr(raw, "peek", None)
    return peek(n)[:n] if peek is not None else b""


def _each(paths: list[Path]) -> Iterator[tuple[str, RankTrace]]:
    """(name, trace) per file, and per member of each tar named."""
    for path in paths:
        if is_tar(path):
            for trace in read_tar(path, parse, SUFFIXES, MAX_FILE_BYTES):
                yield trace.name, trace
        else:
            yield str(path), read(path)


def read_traces(paths: list[Path]) -> SpilledTraces:
    """One RankTrace per rank; refuses duplicate ranks and files of different world sizes.
    A rank's files from different profiling cycles (cycles.py) are its steps together. Each
    is spilled as soon as it is read (trace_spill.py): one file's spans are in memory at a
    time, not every rank's."""
    traces = SpilledTraces()
    seen: dict[int, dict[str | None, str]] = {}  # rank -> cycle -> file
    for path, trace in _each(paths):
        if traces.world is not None and trace.world != traces.world:
            first = next(iter(traces.names.values()))  # the first file's name
            raise refuse("world_differs", file=path, world=trace.world,
                         other=first, other_world=traces.world)  # fmt: skip
        cycles, cycle = seen.setdefault(trace.rank, {}), cycle_of(path)
        if cycles and (cycle is None or cycle in cycles or None in cycles):
            other = cycles.get(cycle) or next(iter(cycles.values()))
            raise refuse("rank_again", file=path, rank=trace.rank, other=other)
        cycles[cycle] = path
        old = traces.of_rank(trace.rank)
        traces.put(_joined(old, trace, path) if old else trace)
        del trace, old  # the spill has it: the next file's parse starts with nothing held
    return traces


def _joined(a: RankTrace, b: RankTrace, path: str) -> RankTrace:
    """One rank's two cycles as one trace; a step in both is a rank seen twice."""
    if {st.step for st in a.steps} & {st.step for st in b.steps}:
        raise refuse("rank_again", file=path, rank=b.rank, other=a.name)
    counts = {k: a.counts.get(k, 0) + b.counts.get(k, 0) for k in {*a.counts, *b.counts}}
    steps = tuple(sorted(a.steps + b.steps, key=lambda st: st.step))
    return replace(a, steps=steps, groups=a.groups | b.groups, counts=counts)
