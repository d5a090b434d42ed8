"""Which format each input file is (a Kineto trace, torchtitan's structured JSONL, a
Megatron or DeepSpeed log), found by name and then by content; and the reading of the logs.

By name: ``*.json``/``*.json.gz`` are traces, ``*.jsonl`` torchtitan's logs; any other file
named on the command line, or ``*.log``/``*.txt``/``*.out`` in a directory, is read as text:
Megatron's when it holds Megatron's per-rank timer blocks, else DeepSpeed's when it holds
DeepSpeed's ``[Rank R] time (ms) | ...`` lines (a Megatron-DeepSpeed log may hold both: the
per-rank blocks say more), else Megatron's when it holds its iteration lines. Logs are read line by
line: memory is the phases kept, never a whole file.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from app.core.traces import TraceError, deepspeed_log, megatron_log, torchtitan_log
from app.core.traces.phases import PhaseLog
from app.core.traces.refusals import refuse
from app.importers.cycles import files_in
from app.importers.trace_tar import TAR_SUFFIXES

GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952, 2.3.1: a gzip member's ID1 ID2

KINETO, TORCHTITAN, MEGATRON, DEEPSPEED = "kineto", "torchtitan", "megatron", "deepspeed"
TRACE_SUFFIXES = (".json", ".json.gz")
LOG_SUFFIXES = (".jsonl", ".log", ".txt", ".out")
MAX_LOG_BYTES = 2 << 30  # 2 GiB of text: a bound on the time an import takes
SNIFF_CHARS = 1 << 20


def input_files(inputs: Iterable[str | Path]) -> list[Path]:
    """The files named, and the traces and logs directly inside the directories named."""
    out: list[Path] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            out += files_in(path, TRACE_SUFFIXES + LOG_SUFFIXES)  # and its cycles (cycles.py)
        elif path.is_file():
            out.append(path)
        else:
            raise TraceError(f"{path}: no such file or directory")
    if not out:
        names = ", ".join(map(str, inputs))
        raise TraceError(f"no trace or log files (*.json, *.json.gz, *.jsonl, *.log) in {names}")
    return out


def file_format(path: Path) -> str:
    """kineto, torchtitan or megatron; TraceError naming the file when it is none."""
    if path.name.endswith(TRACE_SUFFIXES + TAR_SUFFIXES):
        return KINETO  # a tar holds traces only (trace_tar.py)
    if path.name.endswith(".jsonl"):
        return TORCHTITAN
    head = _head(path)
    if "times across ranks (ms):" in head:
        return MEGATRON
    if deepspeed_log.SNIFF.search(head):
        return DEEPSPEED
    if "iteration " in head and "elapsed time per" in head:
        return MEGATRON
    if head.lstrip().startswith("{") and '"log_type_name"' in head:
        return TORCHTITAN
    raise refuse("unknown_format", file=str(path))


def one_format(paths: list[Path]) -> str:
    """The one format of every file; TraceError naming two files of different formats."""
    found = {p: file_format(p) for p in paths}
    first = paths[0]
    for p, fmt in found.items():
        if fmt != found[first]:
            raise refuse("mixed_formats", file=str(p), format=fmt, other=str(first),
                         other_format=found[first])  # fmt: skip
    return found[first]


def _head(path: Path) -> str:
    try:
        with _open(path) as f:
            return f.read(SNIFF_CHARS)
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise TraceError(f"{path}: cannot be read ({err})") from err


def compressed(path: Path) -> bool:
    """Gzip by its name or by its bytes: a .json.gz saved as .json (a browser's download, a
    rename) was refused for "'utf-8' codec can't decode byte 0x8b"."""
    if path.name.endswith(".gz"):
        return True
    with path.open("rb") as f:
        return f.read(2) == GZIP_MAGIC


def _open(path: Path):
    if compressed(path):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def read_logs(paths: list[Path], fmt: str) -> list[PhaseLog]:
    """Each file parsed by its format's parser (app/core/traces), streamed line by line."""
    if fmt == TORCHTITAN:
        parse = torchtitan_log.parse_lines
    elif fmt == DEEPSPEED:
        parse = deepspeed_log.parse_lines
    else:  # Megatron's stamps are local wall time without a zone: read as UTC, for order
        parse = partial(megatron_log.parse_lines, clock=_stamp_seconds)
    out = []
    for path in paths:
        size = path.stat().st_size
        if size > MAX_LOG_BYTES:
            raise refuse("too_big", file=str(path), size=size, limit=MAX_LOG_BYTES)
        try:
            with _open(path) as f:
                out.append(parse(f, str(path)))
        except (OSError, EOFError, UnicodeDecodeError) as err:
            raise TraceError(f"{path}: cannot be read ({err}); a truncated file?") from err
    return out


def _stamp_seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()
