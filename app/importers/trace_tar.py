"""A ``.tar`` of Kineto traces (also ``.tar.gz``/``.tgz``), read as a stream.

tarfile's stream mode (``r|*``) reads the archive front to back once, so one member is
parsed at a time, its events streamed as a file's are (trace_files.py), and nothing is
unpacked to disk. A member that is not a trace by its name (``*.json``, ``*.json.gz``), or
is not a regular file (a link, a device), refuses the whole archive, named: an archive that
mixes in other files is not the trace set it claims to be, and a link could point anywhere.
Directories inside are walked, as a trace set is often archived with its folder; profiling
cycles (``iteration_N`` directories) are those of one folder, with nothing beside them
(cycles.ArchiveCycles), as an upload's tar is read.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from app.core.traces import RankTrace, TraceError
from app.core.traces.refusals import refuse
from app.importers.cycles import ArchiveCycles

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def is_tar(path: Path) -> bool:
    return path.name.endswith(TAR_SUFFIXES)


def read_tar(path: Path, parse, suffixes: tuple[str, ...], limit: int) -> Iterator[RankTrace]:
    """Each member's RankTrace, in archive order, ``parse(binary_file, name, gz)`` reading
    it; TraceError naming the archive and the member for anything refused."""
    cycles = ArchiveCycles(str(path))  # profiling cycles of one folder, or none (cycles.py)
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                if member.isdir():
                    continue
                name = f"{path}:{member.name}"
                if not member.isfile():
                    raise refuse("member_not_file", file=name)
                if not member.name.endswith(suffixes):
                    raise TraceError(f"{name}: not a trace by its name (*.json, *.json.gz)")
                cycles.place(member.name)
                if member.size > limit:
                    raise refuse("too_big", file=name, size=member.size, limit=limit)
                f = tar.extractfile(member)
                yield parse(f, name, member.name.endswith(".gz"))
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise refuse("not_tar", file=str(path), error=str(err)) from err
