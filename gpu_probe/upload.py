"""``meshscope upload SPOOL_DIR --server URL``: send what the server has not stored yet.

A probe's output directory holds ``run.json`` (the run's RunInfo, on every node) and one
JSONL spool per rank (``rank-NNNNN.jsonl``). For each spool this says hello as that rank,
the server answers with the cursor it has stored up to, and the records after it are sent:
the live reporter's own protocol (gpu_probe.reporter.Sender), so an upload is resumable
(a second one starts where the first stopped) and idempotent (the server keys records by
(run, rank, step, attempt); records it holds are not sent again). Each rank is announced as
ended first, so an interrupted upload leaves the run "incomplete", not failed.

Imports no torch: it runs where the spool is, without the probe's dependencies.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from app.core.inputs.protocol import HelloFrame, RunInfo
from gpu_probe.reporter import NOTHING, Sender, Spool

SPOOL_NAME = re.compile(r"^rank-(\d+)\.jsonl$")
PARALLEL = 16  # connections at once: a 4096-rank spool directory does not open 4096
NOTICE_S = 2.0  # a sender that has not reached the server by then is said to be retrying


class UploadError(ValueError):
    """A spool directory or flag that cannot be uploaded; the message says why."""


@dataclass(frozen=True)
class RankUpload:
    rank: int
    spooled: int  # records in the spool
    sent: int  # records after the server's cursor at hello: what this upload sent
    unsent: int  # what the server had not acked when we stopped
    error: str | None


def spools(directory: Path) -> tuple[RunInfo, dict[int, Spool]]:
    run_json = directory / "run.json"
    if not run_json.is_file():
        raise UploadError(f"{directory} has no run.json: not a probe output directory")
    info = RunInfo.model_validate_json(run_json.read_text(encoding="utf-8"))
    found = {}
    for path in sorted(directory.iterdir()):
        match = SPOOL_NAME.match(path.name)
        if match and int(match[1]) < info.world_size:
            found[int(match[1])] = Spool(path)
    if not found:
        raise UploadError(f"{directory} has no rank-NNNNN.jsonl spools")
    return info, found


def _sender(info: RunInfo, rank: int, spool: Spool, url: str, token: str) -> Sender:
    attempt = spool.last_attempt() or 0
    hello = HelloFrame(rank=rank, attempt=attempt, info=info)
    sender = Sender(spool, url, token, hello, heartbeat_s=None)
    records = spool.records()
    sender.last_published = max((c for c, _ in records), default=NOTHING)
    sender.ending.set()  # nothing more will come: say so before sending
    sender.stopping.set()  # finish once everything is acked
    return sender


def upload(directory: Path, url: str, token: str, timeout_s: float) -> list[RankUpload]:
    info, found = spools(directory)
    out, ranks, noticed = [], sorted(found), False
    deadline = time.monotonic() + timeout_s
    for first in range(0, len(ranks), PARALLEL):
        batch = {r: _sender(info, r, found[r], url, token) for r in ranks[first : first + PARALLEL]}
        for sender in batch.values():
            sender.start()
        for rank, sender in batch.items():
            noticed = _join(sender, deadline, url, timeout_s, noticed)
            out.append(_result(rank, found[rank], sender))
    return out


def _join(sender: Sender, deadline: float, url: str, timeout_s: float, noticed: bool) -> bool:
    """Wait for ``sender`` until the deadline; the first time a sender has never reached the
    server after NOTICE_S and has failed, say so once (True once said). A server that was
    not there kept the upload (and an import's --server) silent for the whole --timeout."""
    waited = time.monotonic()
    while sender.is_alive() and time.monotonic() < deadline:
        sender.join(min(NOTICE_S, max(deadline - time.monotonic(), 0.0)))
        late = time.monotonic() - waited >= NOTICE_S
        never = sender.is_alive() and sender.resumed_from is None and sender.error
        if not noticed and late and never:
            print(f"meshscope upload: {url} does not answer ({sender.error}); retrying until "
                  f"--timeout ({timeout_s:g} s) runs out", file=sys.stderr, flush=True)  # fmt: skip
            noticed = True
    return noticed


def _result(rank: int, spool: Spool, sender: Sender) -> RankUpload:
    start = sender.resumed_from
    spooled = len(spool.records())
    sent = len(spool.after(start)) if start is not None else 0
    unsent = len(spool.after(sender.acked))
    error = None if sender.done() else (sender.error or "timed out")
    return RankUpload(rank, spooled, sent, unsent, error)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="meshscope upload",
        description="Send a probe spool's records that the server has not stored yet.",
        allow_abbrev=False,
    )
    p.add_argument("spool_dir", metavar="SPOOL_DIR", help="the probe's --out directory")
    p.add_argument("--server", required=True, help="ws://host:port/ws/ingest")
    p.add_argument("--token", default=None, help="default: $MESHSCOPE_INGEST_TOKEN")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole upload")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    token = args.token or os.environ.get("MESHSCOPE_INGEST_TOKEN")
    if not token:
        print("meshscope upload: needs --token or $MESHSCOPE_INGEST_TOKEN", file=sys.stderr)
        return 2
    try:
        results = upload(Path(args.spool_dir), args.server, token, args.timeout)
    except (UploadError, ValueError, OSError) as err:
        print(f"meshscope upload: {err}", file=sys.stderr)
        return 2
    sent = sum(r.sent for r in results)
    unsent = sum(r.unsent for r in results)
    print(f"meshscope upload: {len(results)} rank(s), {sent} record(s) sent, "
          f"{unsent} not acked", flush=True)  # fmt: skip
    for r in results:
        if r.error:
            print(f"  rank {r.rank}: {r.unsent} unsent ({r.error})", file=sys.stderr)
    return 0 if unsent == 0 and not any(r.error for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
