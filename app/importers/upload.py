"""The file side of an upload on /runs (app/api/run_import.py): the uploaded file, already on
disk in a private directory, into the run ``meshscope import-trace`` would make of it.

One file comes per upload: a trace, a torchtitan JSONL, a Megatron or DeepSpeed log, or a
``.tar`` (the page packs several chosen files into one). A tar is unpacked into the
directory, each member checked before any byte of it is written: a regular file (no link,
no device), a plain name the importer reads by its suffix, and no name twice. Its files
land flat, but those of a profiling cycle (torchtitan's ``iteration_N/rankK_trace.json.gz``,
cycles.py) keep their ``iteration_N`` directory, so each cycle's steps are read as the CLI
reads a traces folder, not as duplicate ranks. The directory is then read
by the CLI's own code (import_trace.prepare_any), so an upload and a CLI import of the same
files store the same records. Every refusal names the file as the user called it, never
the private directory.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.traces import TraceError
from app.core.traces.refusals import refuse
from app.importers.cycles import ArchiveCycles
from app.importers.import_report import Report
from app.importers.import_trace import prepare_any
from app.importers.log_files import LOG_SUFFIXES, TRACE_SUFFIXES
from app.importers.trace_tar import is_tar

# A file name as a browser sends it: no directory, no leading dot, nothing a shell or a
# path would read as more than a name.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,199}")
IMPORTABLE = TRACE_SUFFIXES + LOG_SUFFIXES
MAX_MEMBERS = 4096  # files in one tar: 1,024 ranks of traces and their logs, with room


def name_ok(name: str) -> bool:
    return bool(NAME.fullmatch(name)) and name not in (".", "..")


def unpack(archive: Path, dest: Path, limit: int) -> list[Path]:
    """The tar's regular files, written into ``dest`` as a directory import reads them
    (cycles.ArchiveCycles: each ``iteration_N`` directory kept, every other file flat), at
    most ``limit`` bytes in all (a .tar.gz may hold far more than it weighs); TraceError
    naming the member."""
    seen: dict[str, str] = {}  # the path in dest -> the member's name
    cycles = ArchiveCycles(archive.name)
    total = 0
    try:
        with tarfile.open(archive, mode="r|*") as tar:  # one pass, front to back
            for member in tar:
                if member.isdir():
                    continue
                where = f"{archive.name}:{member.name}"
                _check_member(member, where, seen)
                placed = cycles.place(member.name)
                if placed in seen:
                    raise refuse("member_twice", file=where, name=placed, other=seen[placed])
                total += member.size  # the header's size, before a byte is written
                if total > limit:
                    raise refuse("archive_too_big", file=where, limit=limit)
                seen[placed] = member.name
                (dest / placed).parent.mkdir(exist_ok=True)
                with tar.extractfile(member) as src, (dest / placed).open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise refuse("not_tar", file=archive.name, error=str(err)) from err
    if not seen:
        raise refuse("archive_empty", file=archive.name)
    return [dest / placed for placed in seen]


def _check_member(member: tarfile.TarInfo, where: str, seen: dict) -> None:
    base = PurePosixPath(member.name).name
    if not member.isfile():
        raise refuse("member_not_file", file=where)
    if not name_ok(base) or not base.endswith(IMPORTABLE):
        raise refuse("member_name", file=where, suffixes=", ".join("*" + s for s in IMPORTABLE))
    if len(seen) >= MAX_MEMBERS:
        raise refuse("too_many_members", file=where, limit=MAX_MEMBERS)


def layout_args(run: str, paths: list[Path], **given) -> argparse.Namespace:
    """The Namespace import_trace.add_arguments would parse, from the route's fields."""
    fields = dict(dp=None, tp=None, pp=None, cp=None, ep=None, order=None, gpus_per_node=None,
                  schedule=None, microbatches=None, scenario=None, db=None, server=None,
                  token=None)  # fmt: skip
    unknown = set(given) - set(fields)
    if unknown:
        raise TypeError(f"not an import flag: {sorted(unknown)}")
    return argparse.Namespace(paths=[str(p) for p in paths], run=run, **{**fields, **given})


def prepare_upload(
    staged: Path, run: str, limit: int, **given
) -> tuple[RunInfo, list[ProbeRecord], Report]:
    """The run of the one file in ``staged`` (a private directory): info, records, report;
    a tar unpacks to at most ``limit`` bytes. TraceError (naming the uploaded file, not
    ``staged``) when refused."""
    (upload,) = list(staged.iterdir())
    try:
        if is_tar(upload):
            unpacked = staged / "unpacked"
            unpacked.mkdir()
            unpack(upload, unpacked, limit)
            paths = [unpacked]
        else:
            paths = [upload]
        return prepare_any(layout_args(run, paths, **given))
    except (TraceError, OSError) as err:
        params = {k: _unstaged(v, staged) if isinstance(v, str) else v
                  for k, v in getattr(err, "params", {}).items()}  # fmt: skip
        key = getattr(err, "key", None)
        raise TraceError(_unstaged(str(err), staged), key, params) from err


def _unstaged(text: str, staged: Path) -> str:
    """``text`` with the private directory's paths cut to the file names the user knows."""
    for prefix in (staged / "unpacked", staged):
        text = text.replace(f"{prefix}/", "").replace(str(prefix), "the upload")
    return text
