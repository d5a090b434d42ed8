"""Merging a run's small action segments (app/live/actions_segments.py).

A live run's segments are written at query time, so a page that asks once a minute leaves
a small segment a minute: a day of them would be 1,440 files for every query to open. When
the segments after the last big one number ``merge_at``, they are rewritten as one (named
by the ids it spans, written under a temporary name and renamed when whole), then removed.
A merge killed between that rename and the removals leaves the parts beside the merged
segment: ``drop_covered`` removes a segment whose ids lie inside another's when the run's
segments are next listed, so no action is read twice.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import duckdb

SEGMENT = re.compile(r"^(\d+)-(\d+)\.parquet$")
# What a segment's columns mean, in its Parquet footer: bumped whenever they change (2: cp
# and ep coordinates, and ``covered`` under cp/ep waits too), so a segment an older server
# wrote is rebuilt rather than read as if it were of this layout (actions_segments).
LAYOUT = "2"
FORMAT = f"FORMAT parquet, KV_METADATA {{meshscope_layout: '{LAYOUT}'}}"
SMALL_BYTES = 32 * 2**20  # past this a segment is left as it is


def span(path: Path) -> tuple[int, int]:
    m = SEGMENT.match(path.name)
    return int(m[1]), int(m[2])


def drop_covered(files: list[Path]) -> list[Path]:
    """The segments in id order, less (and without) any inside another's id range."""
    out: list[Path] = []
    reach = 0
    for p in sorted(files, key=lambda p: (span(p)[0], -span(p)[1])):
        if span(p)[1] <= reach:
            p.unlink(missing_ok=True)
            continue
        out.append(p)
        reach = span(p)[1]
    return out


def compact(
    folder: Path, files: list[Path], duck: Callable[[], duckdb.DuckDBPyConnection], merge_at: int
) -> bool:
    """Merge the small segments at the end of ``files`` (id order) when there are
    ``merge_at`` of them; whether it did. The run's lock is held."""
    tail: list[Path] = []
    for p in reversed(files):
        if p.stat().st_size >= SMALL_BYTES:
            break
        tail.insert(0, p)
    if len(tail) < max(merge_at, 2):
        return False
    first, last = span(tail[0])[0], span(tail[-1])[1]
    part = folder / f".tmp-merge-{first}-{last}.parquet"
    listed = ", ".join("'" + str(p).replace("'", "''") + "'" for p in tail)
    con = duck()
    try:
        target = str(part).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM read_parquet([{listed}])) TO '{target}' ({FORMAT})")
    finally:
        con.close()
    os.replace(part, folder / f"{first}-{last}.parquet")
    for p in tail:
        p.unlink(missing_ok=True)
    return True
