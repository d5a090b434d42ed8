"""Profiling cycles: torchtitan's profiler writes each cycle's traces to its own directory,
``<save_traces_folder>/iteration_<prof.step_num>/rank<K>_trace.json`` (torchtitan
tools/profiling.py, trace_handler), from one ``torch.profiler.profile`` whose step count runs
on across cycles, so each cycle's ``ProfilerStep#N`` are other steps of the same run.

A directory named for import is read with its ``iteration_N`` subdirectories, in N's order,
and a rank's files from two cycles are one rank's steps (trace_files.read_traces merges
them); ``--follow`` on the traces folder so stores each new cycle as it appears.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from app.core.traces.refusals import refuse

CYCLE = re.compile(r"iteration_(\d+)$")


def files_in(directory: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """The files directly in ``directory`` with one of ``suffixes``, sorted, then those of
    each ``iteration_N`` subdirectory, in N's order."""
    out = sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith(suffixes))
    cycles = [
        (int(m[1]), p) for p in directory.iterdir() if p.is_dir() and (m := CYCLE.match(p.name))
    ]
    for _, cycle in sorted(cycles):
        out += sorted(p for p in cycle.iterdir() if p.is_file() and p.name.endswith(suffixes))
    return out


def cycle_of(name: str) -> str | None:
    """The ``iteration_N`` directory a file (or a tar member, ``archive:member``) is in."""
    found = CYCLE.search(str(Path(name).parent))
    return found[0] if found else None


class ArchiveCycles:
    """An archive's members against the shapes a tar of traces may have: every file in an
    ``iteration_N`` directory of one traces folder (the profiling cycles above), or none in
    any. A directory import reads only its own files and its cycles (files_in), but an
    archive's files come from any folder: a file beside the cycles, or the cycles of two
    folders (two runs, or two profilers), would be read as one run's steps, so are refused."""

    def __init__(self, archive: str) -> None:
        self.archive = archive
        self.home: tuple[str, str] | None = None  # (traces folder, first cycle member)
        self.flat: str | None = None  # the first member outside any cycle

    def place(self, member: str) -> str:
        """The member's path as a directory import reads it (``iteration_N/name`` or
        ``name``); TraceError naming it and the member it cannot go with."""
        path = PurePosixPath(member)
        if not CYCLE.match(path.parent.name):
            if self.home:
                raise self._mixed(member, self.home[1])
            self.flat = self.flat or member
            return path.name
        folder = str(path.parent.parent)
        apart = self.home[1] if self.home and self.home[0] != folder else None
        if self.flat or apart:
            raise self._mixed(member, self.flat or apart)
        self.home = self.home or (folder, member)
        return f"{path.parent.name}/{path.name}"

    def _mixed(self, member: str, other: str | None):
        return refuse("cycle_mixed", file=f"{self.archive}:{member}", other=other)
