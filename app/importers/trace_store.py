"""Where an import's records go: a database file, through the live store's own operations,
or a running server, through ``meshscope upload``'s code (gpu_probe.upload)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.traces import TraceError
from app.core.traces.refusals import refuse
from app.importers.compact_records import Ops, Records
from app.importers.import_report import Report
from app.live import event_text
from app.live.store import RowRejected, Store
from app.live.verdict import IMPORT_ABSENT


def _conflict(store: Store, info: RunInfo) -> TraceError | None:
    """Why a stored run of this name is another run (the store's hello rule: every field
    but ``steps`` must agree), or None."""
    row = store.conn.execute("SELECT info FROM runs WHERE run = ?", (info.run,)).fetchone()
    if row is None:
        return None
    old = RunInfo.model_validate_json(row[0]).model_dump(exclude={"steps"})
    new = info.model_dump(exclude={"steps"})
    diff = [k for k in new if old[k] != new[k]]
    return refuse("run_exists", run=info.run, fields=", ".join(diff)) if diff else None


def to_db(
    path: Path,
    info: RunInfo,
    records: Sequence[ProbeRecord],
    detail: str | Report,
) -> int:
    """Store the run in one transaction (all or nothing); returns the records newly stored."""
    try:
        store = Store(path)
    except sqlite3.Error as err:  # a folder, /proc, a file that is no database: one line
        raise TraceError(f"--db {path}: cannot open it as a database ({err})") from err
    try:
        return store_run(store, info, records, detail)
    finally:
        store.close()


def store_run(
    store: Store,
    info: RunInfo,
    records: Sequence[ProbeRecord],
    detail: str | Report,
) -> int:
    """``to_db`` on an open store: the server's upload (app/api/run_import.py) calls it on
    its own store's writer thread, so a CLI import and an upload store alike. The records
    are held compact and made one at a time as the store takes them (compact_records.py).
    ``detail``: the import's report, kept keyed for the run page (app/live/event_text.py)."""
    why = _conflict(store, info)
    if why:
        raise why
    now = time.time()
    records = Records.of(records)
    ranks = records.ranks
    hello = [("hello", (info, rank, 0, now)) for rank in ranks]
    # A trace import some of whose ranks have no file (the report's ``absent``) is
    # incomplete, as a live run whose ranks ended with records unsent (app/live/liveness.py),
    # not done: its page said "complete". A log that holds some ranks by design is done.
    absent = detail.absent if isinstance(detail, Report) else ""
    missing = ("incomplete", f"rank(s) {absent} {IMPORT_ABSENT}")  # the verdict reads its end
    status = missing if absent else ("done", "")
    tail = [("status", (info.run, status[0], None, status[1], now)),
            ("event", (info.run, None, "imported", _event_detail(detail), now))]  # fmt: skip
    make = partial(_Kept, len(ranks), len(records))
    kept = store.folded(Ops(hello, records, tail, now), make)  # type: ignore[arg-type]
    if kept.rejected:
        raise TraceError(f"the store refused {kept.rejected} record(s): {kept.first}")
    return kept.stored


def _event_detail(detail: str | Report) -> str:
    """The imported event's detail: the report's English and its lines' catalogue keys."""
    if not isinstance(detail, Report):
        return event_text.keyed(detail, [])
    said = [event_text.line(f"live.import.{s['key']}", **s["params"]) for s in detail.said()]
    return event_text.keyed(str(detail), said)


@dataclass
class _Kept:
    """What store_run reads of its transaction's results, counted as they come instead of
    kept in a list of one per record: the records stored, and the refusals."""

    skip: int  # the hellos before the records
    records: int
    seen: int = 0
    stored: int = 0
    rejected: int = 0
    first: RowRejected | None = None

    def append(self, result: object) -> None:
        if isinstance(result, RowRejected):
            self.rejected += 1
            self.first = self.first or result
        elif self.skip <= self.seen < self.skip + self.records and result.stored:  # type: ignore[attr-defined]
            self.stored += 1
        self.seen += 1


def to_server(url: str, token: str | None, info: RunInfo, records: list[ProbeRecord]) -> int:
    """Write the records as a probe's spool directory and upload it; the upload's exit code."""
    with tempfile.TemporaryDirectory(prefix="meshscope-import-") as tmp:
        spool = Path(tmp)
        (spool / "run.json").write_text(info.model_dump_json(), encoding="utf-8")
        files: dict[int, object] = {}
        try:
            for rec in records:
                if rec.rank not in files:
                    files[rec.rank] = (spool / f"rank-{rec.rank:05d}.jsonl").open("w")
                files[rec.rank].write(rec.model_dump_json(exclude_none=True) + "\n")
        finally:
            for f in files.values():
                f.close()
        cmd = [sys.executable, "-m", "gpu_probe.upload", str(spool), "--server", url]
        env = dict(os.environ)
        if token:
            env["MESHSCOPE_INGEST_TOKEN"] = token
        return subprocess.run(cmd, env=env, check=False).returncode
