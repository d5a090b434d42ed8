"""``meshscope import-trace PATH... --follow``: import again whenever the inputs change, so a run
that is still training shows up step by step on its live page (issue 25 item 4).

Poll-based (no new dependency; it works on network filesystems, where inotify does not):
every ``--poll`` seconds the input files' names, sizes and modification times are read. A
set that has changed and then stayed the same for one whole poll (its writer done with it)
is imported again, whole, by the import's own code (import_trace.prepare_any and the same
stores). Importing again is safe: the store keys records by (run, rank, step, attempt), so
only the new steps are stored, and a follow stopped and started again resumes without
duplicates. A log's newest step is held back while the log grows, since its timer block may
be half written and a stored record is never replaced; it is stored once a later step
appears, or when the follow ends. The command ends on Ctrl-C, or after ``--follow-timeout``
seconds in which no input changed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.traces import TraceError
from app.importers.import_trace import db_path, prepare_any, without_token
from app.importers.log_files import KINETO, input_files, one_format
from app.importers.trace_store import to_db, to_server

Snapshot = tuple[tuple[str, int, int], ...]


def snapshot(paths: list[str]) -> Snapshot:
    """(name, size, mtime) of every input file; empty while there are none yet."""
    try:
        files = input_files(paths)
    except TraceError:  # a directory still empty, or not made yet
        return ()
    out = []
    for p in files:
        try:
            st = p.stat()
        except OSError:  # removed between the listing and now: seen on the next poll
            continue
        out.append((str(p), st.st_size, st.st_mtime_ns))
    return tuple(out)


def one_pass(args: argparse.Namespace, final: bool) -> tuple[str, bool]:
    """Import the inputs as they are now: one line saying what was stored, and whether a
    log's newest step was left for a later pass (never when ``final``). TraceError/OSError
    when refused."""
    logs = one_format(input_files(args.paths)) != KINETO
    info, records, summary = prepare_any(args)
    last = max(r.step for r in records)
    held = logs and not final and last > 0
    kept = [r for r in records if r.step < last] if held else records
    if args.server:
        code = to_server(args.server, args.token, info, kept)
        stored = "sent" if code == 0 else f"upload exit code {code}"
    else:
        stored = f"{to_db(db_path(args), info, kept, summary)} new"
    steps = f"steps 0..{last - 1} (step {last} held back while the log grows)" if held else (
        f"steps 0..{last}")  # fmt: skip
    return f"run {info.run}: {len(kept)} record(s), {stored}; {steps}", held


@dataclass
class Follower:
    """The polling loop's state; ``clock``/``sleep``/``say`` are the real ones but in tests."""

    args: argparse.Namespace
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    say: Callable[[str], None] = field(default=lambda line: print(line, flush=True))
    imported: Snapshot = ()  # the inputs as last imported
    held: bool = False  # the last pass left a step for later

    def step(self, snap: Snapshot, final: bool = False) -> None:
        try:
            line, held = one_pass(self.args, final)
        except (TraceError, OSError) as err:  # a file half written, most likely: next change
            self.say(f"meshscope import-trace --follow: not yet: {err}")
        else:
            self.say(f"meshscope import-trace --follow: {line}")
            self.held = held
        self.imported = snap

    def run(self) -> int:
        a = self.args
        bound = "Ctrl-C" if a.follow_timeout is None else f"{a.follow_timeout:g} s without a change"
        self.say(f"meshscope import-trace --follow: watching {', '.join(a.paths)} every "
                 f"{a.poll:g} s until {bound}")  # fmt: skip
        pending, changed = None, self.clock()
        try:
            while a.follow_timeout is None or self.clock() - changed < a.follow_timeout:
                snap = snapshot(a.paths)
                if snap != pending:  # changed since the last poll: let it settle for one
                    pending, changed = snap, self.clock()
                elif snap and snap != self.imported:
                    self.step(snap)
                self.sleep(a.poll)
        except KeyboardInterrupt:
            self.say("meshscope import-trace --follow: interrupted")
        if self.held and self.imported:  # what was held back, now that nothing grows
            self.step(self.imported, final=True)
        return 0


def follow(args: argparse.Namespace) -> int:
    if args.poll <= 0 or (args.follow_timeout is not None and args.follow_timeout <= 0):
        print("meshscope import-trace: --poll and --follow-timeout are seconds > 0",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.server and not args.server.startswith(("ws://", "wss://")):
        print(f"meshscope import-trace: --server {args.server!r} is not an ingest socket: give "
              "ws://HOST:PORT/ws/ingest", file=sys.stderr)  # fmt: skip
        return 2
    if without_token(args):
        return 2
    return Follower(args).run()
