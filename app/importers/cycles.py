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
from pathlib import Path

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
