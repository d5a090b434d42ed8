"""``meshscope import-trace PATH... --run NAME``: PyTorch profiler traces into the live store.

Reads one Kineto trace per rank (app/importers/trace_files.py), turns them into the probe's
records (app/core/traces), and stores them where the probe's go: straight into a database
file (``--db``, one transaction: a refused or failed import stores nothing), or through a
running server's ingest (``--server``: the records are written as a probe spool and sent by
``meshscope upload``'s own code, gpu_probe.upload, in a separate interpreter since nothing in
``app`` imports ``gpu_probe``). Importing the same files again stores nothing new: the store
keys records by (run, rank, step, attempt).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.core.layout.topology import DEFAULT_ORDER, Layout, parse_order
from app.core.traces import (
    Alignment,
    RunShape,
    TraceError,
    align,
    build_run,
    find_stragglers,
    infer_layout,
)
from app.core.traces.records import event_kind
from app.importers import scenario_link
from app.importers.compact_records import Records
from app.importers.import_logs import prepare_logs
from app.importers.import_report import Report, line, no_file, stragglers
from app.importers.log_files import KINETO, input_files, one_format
from app.importers.trace_files import read_traces, trace_paths
from app.importers.trace_spill import labelled as label_spilled
from app.importers.trace_store import to_db, to_server


def positive(text: str) -> int:
    """A size flag's value: an integer >= 1 (0 read as "not given" and was inferred)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="trace or log files, directories, or a .tar of traces",
    )
    p.add_argument("--run", required=True, help="the run's name on /runs")
    for axis in ("dp", "tp", "pp", "cp", "ep"):
        p.add_argument(
            f"--{axis}", type=positive, default=None, help=f"{axis} size (else inferred)"
        )
    p.add_argument("--order", default=None, help="rank order, e.g. tp-dp-pp or megatron")
    p.add_argument("--gpus-per-node", type=positive, default=None, help="default 8")
    p.add_argument("--scenario", default=None, metavar="URL",
                   help="a meshscope scenario link: its dp, tp, pp, cp, ep, order, GPUs per "
                   "node, schedule and microbatches, instead of those flags")  # fmt: skip
    p.add_argument("--schedule", default=None, help="pipeline schedule (default 1f1b)")
    p.add_argument("--microbatches", type=positive, default=None)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--db", default=None, help="SQLite file (default: the server's)")
    where.add_argument("--server", default=None, help="ws://host:port/ws/ingest")
    p.add_argument("--token", default=None, help="with --server; default $MESHSCOPE_INGEST_TOKEN")
    # app/importers/follow.py: import again as the files change, until Ctrl-C or the bound.
    p.add_argument("--follow", action="store_true", help="keep importing new steps as written")
    p.add_argument("--follow-timeout", type=float, default=None, metavar="S",
                   help="with --follow: stop after S seconds without a change")  # fmt: skip
    p.add_argument("--poll", type=float, default=2.0, metavar="S", help="with --follow")


def _layout(args: argparse.Namespace, traces) -> Layout:
    cp, ep = getattr(args, "cp", None), getattr(args, "ep", None)  # older callers' Namespaces
    given = [args.dp, args.tp, args.pp, cp, ep, args.order]
    if all(v is None for v in given):
        return infer_layout(traces, scenario_link.gpus_per_node(args))
    tp, pp, cp, ep = args.tp or 1, args.pp or 1, cp or 1, ep or 1
    # An axis left out is 1, but dp takes what the others leave of the traces' world.
    dp = args.dp or max(traces[0].world // (tp * pp * cp), 1)
    try:
        order = parse_order(args.order) if args.order else DEFAULT_ORDER
        return Layout(dp, tp, pp, order, scenario_link.gpus_per_node(args), cp=cp, ep=ep)
    except ValueError as err:
        raise TraceError(f"layout: {err}") from err


@dataclass(frozen=True)
class Prepared:
    """Everything an import stores and reports; nothing is written before it exists."""

    info: RunInfo
    records: Records  # compact until stored (compact_records.py)
    alignment: Alignment
    layout: Layout
    kinds: Counter  # spans by what they became: F, B, tp, dp, pp_send, ... or unstored
    first_step: int  # the ProfilerStep number stored as step 0


def _kinds(labelled) -> tuple[Counter, int]:
    """How many spans each stored kind got, and what was left as host time (no probe kind);
    and the first step (records.first_step), in the same walk of the spilled traces."""
    out: Counter = Counter()
    first = None
    for t in labelled:
        for st in t.steps:
            first = st.step if first is None else min(first, st.step)
            for s in st.spans:
                kind = event_kind(s)
                out[kind or f"{s.axis or s.kind} (not stored: host time)"] += 1
    return out, first


def prepare(args: argparse.Namespace) -> Prepared:
    """Read, label, align and convert; TraceError when the traces are refused."""
    # Every stage walks the ranks from spill files, one rank's spans in memory at a time
    # (trace_spill.py), and the records go to one as they are made (compact_records.py).
    traces = read_traces(trace_paths(args.paths))
    layout = _layout(args, traces)
    labelled = label_spilled(traces, layout)
    del traces  # the labelled copies replace them
    alignment = align(labelled, layout)
    shape = RunShape(args.run, args.schedule, args.microbatches)
    try:
        info, records = build_run(labelled, layout, alignment, shape)
        kinds, first = _kinds(labelled)
        return Prepared(info, Records(records), alignment, layout, kinds, first)
    except ValidationError as err:  # a run name or schedule the protocol refuses
        where = ".".join(str(p) for p in err.errors()[0]["loc"])
        raise TraceError(f"{where}: {err.errors()[0]['msg']}") from err


def report(p: Prepared) -> Report:
    info, alignment = p.info, p.alignment
    ranks = sorted(alignment.offsets_us)
    offsets = ", ".join(f"rank {r}: {alignment.offsets_us[r] / 1e3:+.3f}" for r in ranks)
    out = (
        line("trace_head", run=info.run, files=len(ranks), records=len(p.records),
             layout=scenario_link.described(info), first=p.first_step)
        + line("spans", spans=", ".join(f"{k} {n}" for k, n in sorted(p.kinds.items())))
        + line("offsets", rank=ranks[0], offsets=offsets)
        + line("residual", residual_ms=f"{alignment.residual_us / 1e3:.3f}",
               matched=alignment.matched, step_ms=f"{alignment.step_us / 1e3:.3f}")
    )  # fmt: skip
    if alignment.unaligned:
        out += line("unaligned", ranks=list(alignment.unaligned))
    if missing := sorted(set(range(info.world_size)) - set(ranks)):
        out += no_file(missing, info.world_size)  # the run is then stored incomplete
    return out + stragglers(find_stragglers(p.records, p.layout))


def prepare_any(args: argparse.Namespace) -> tuple[RunInfo, Sequence[ProbeRecord], Report]:
    """Traces (prepare) or logs (import_logs), by the files' one format (log_files)."""
    args = scenario_link.resolved(args)
    paths = input_files(args.paths)
    fmt = one_format(paths)
    if fmt != KINETO:
        done = prepare_logs(args, paths, fmt)
        info, records, summary = done.info, done.records, done.summary
    else:
        prepared = prepare(args)
        info, records, summary = prepared.info, prepared.records, report(prepared)
    info = scenario_link.linked(info, getattr(args, "scenario", None))
    if info.scenario:
        summary += line("priced", fields=" ".join(f"{k}={v}" for k, v in info.scenario.items()))
    elif info.scenario is not None:
        summary += line("priced_defaults")
    return info, records, summary


def run(args: argparse.Namespace) -> int:
    """The command: 0 when stored, 1 when the server's upload left records unsent, 2 when
    the traces are refused (one line naming the file, group or rank, and why)."""
    if args.server and not args.server.startswith(("ws://", "wss://")):
        # An http:// address would make the uploader retry a socket that never opens, forever.
        print(f"meshscope import-trace: --server {args.server!r} is not an ingest socket: give "
              "ws://HOST:PORT/ws/ingest (wss:// behind TLS)", file=sys.stderr)  # fmt: skip
        return 2
    if without_token(args):
        return 2
    try:
        info, records, summary = prepare_any(args)
        if args.server:
            print(summary, flush=True)
            sent = to_server(args.server, args.token, info, records)
            return 0 if sent == 0 else 1
        stored = to_db(db_path(args), info, records, summary)
    except (TraceError, OSError) as err:
        print(f"meshscope import-trace: {err}", file=sys.stderr)
        return 2
    warm_actions(db_path(args), info.run)
    print(summary + line("stored", stored=stored, db=db_path(args)), flush=True)
    return 0


def without_token(args: argparse.Namespace) -> bool:
    """--server without the ingest token, said before the files are read: the uploader
    refused it only after the whole parse."""
    if args.server and not (args.token or os.environ.get("MESHSCOPE_INGEST_TOKEN")):
        print("meshscope import-trace: --server needs the ingest token: --token T or "
              "MESHSCOPE_INGEST_TOKEN", file=sys.stderr)  # fmt: skip
        return True
    return False


def warm_actions(db: Path, run: str) -> None:
    """The run's action segments written now, where the server keeps them (its
    MESHSCOPE_ACTIONS_DIR, else beside the database), so the run page's whole-run card
    and /api/runs/<run>/actions answer at once instead of catching the import up first."""
    from app.live.actions_segments import Segments  # DuckDB only when something was stored
    from app.settings import Settings

    segments = Segments(db, Settings().actions_dir)
    try:
        segments.warm(run)
    finally:
        segments.close()


def db_path(args: argparse.Namespace) -> Path:
    if args.db:
        return Path(args.db)
    from app.settings import Settings  # the server's default database, as `serve` opens it

    return Settings().db


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="meshscope import-trace",
        description="Import PyTorch profiler traces (one per rank), torchtitan's structured "
        "logs (one per rank), a Megatron log (--timing-log-option all) or a DeepSpeed log "
        '("wall_clock_breakdown": true) as a measured run.',
    )
    add_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.follow:
        from app.importers.follow import follow  # it imports this module

        return follow(args)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
