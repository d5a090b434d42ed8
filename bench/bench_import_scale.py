"""Import at scale (issue 25, Scale: "memory bounded by one rank's largest step, not by the
file; 64 ranks x 200 MB of trace stays under 1 GB of RSS"): peak RSS and MB per CPU-second
of `meshscope import-trace --db` (read, label, align, build, store: the whole command) over
synthetic Kineto traces, per (ranks, MB per rank), side by side in one run. Not a test.

The traces are HTA's published DDP/NCCL rank-0 trace (tests/fixtures/traces/hta, MIT, the
generator of bench_import_vs_hta.py) with its three profiled steps repeated until a file
reaches the size asked (each copy one trace length later, its steps renumbered), its one
process group widened to every rank. ``traceEvents`` comes first and the rank's header
after it (the streaming reader takes either order), so the events are written once and each
rank's file is a kernel-side copy of them plus its own ``distributedInfo``: 64 x 200 MB is
12.8 GB on disk (asked for free space first) and minutes of copying, not of JSON encoding.

Each import runs in its own interpreter, so its peak RSS (VmHWM) is its own; ``--trace-top``
also runs one with tracemalloc and prints where the largest live allocations were made at
the peak (what to look at if RSS grows with the files).

Memory bound: after the table, each pair of sizes (4x50 then 4x200: 4x the steps; 4x50
then 16x50: 4x the ranks) prints the growth of peak RSS per rank-step added between them,
~0 when memory is bounded by one rank, not by the import's rank-steps. ``--baseline REV``
imports the same traces with REV's app/ too (bench/revision.py), its figures beside these.

    python bench/bench_import_scale.py [--sizes 4x50 4x200 64x200] [--baseline HEAD~3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_import_vs_hta import widened  # run as a script: bench/ is on sys.path
from revision import unpack

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "traces" / "hta" / "nccl_data.json.gz"

IMPORT = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
def cpu():
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime
import app.importers.import_trace as it
base = hwm()
top = {top}
snap = []
if top:
    import tracemalloc
    tracemalloc.start(8)
    store = it.to_db
    def to_db(*a):  # the records all built, none stored yet: the import's widest point
        snap.append(tracemalloc.take_snapshot())
        return store(*a)
    it.to_db = to_db
t, c = time.perf_counter(), cpu()
rc = it.main([sys.argv[1], "--run", "scale", "--db", sys.argv[2]])
out = {{"rc": rc, "s": time.perf_counter() - t, "cpu_s": cpu() - c, "rss_mib": hwm(),
       "base_mib": base}}
if top:
    out["peak_traced_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    out["top"] = [str(s) for s in snap[0].statistics("lineno")[:{top}]]
print(json.dumps(out))
"""


def body(mb_per_rank: int, ranks: int, out: Path) -> tuple[int, int]:
    """The shared traceEvents part of every rank's file; returns (bytes, steps)."""
    doc = widened(ranks)
    timed = [e for e in doc["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)
    copies, written = 0, 0
    with out.open("w", encoding="utf-8") as f:
        f.write('{"traceEvents": [\n')
        while written < mb_per_rank * 1e6:
            for e in doc["traceEvents"]:
                e = dict(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] += copies * span
                if e.get("name", "").startswith("ProfilerStep#"):
                    e["name"] = f"ProfilerStep#{int(e['name'].split('#')[1]) + 3 * copies}"
                text = ("" if written == 0 else ",\n") + json.dumps(e)
                f.write(text)
                written += len(text)
            copies += 1
        f.write("\n]")
    return out.stat().st_size, 3 * copies


def write_ranks(ranks: int, mb_per_rank: int, out: Path, scratch: Path) -> tuple[float, int]:
    """``ranks`` files in ``out``; returns (MB in all, steps per rank)."""
    shared = scratch / "events.part"
    size, steps = body(mb_per_rank, ranks, shared)
    with gzip.open(FIXTURE, "rb") as f:
        header = {k: v for k, v in json.load(f).items() if k != "traceEvents"}
    info = header["distributedInfo"]
    info["world_size"] = ranks
    info["pg_config"][0].update(pg_size=ranks, ranks=list(range(ranks)))
    total = 0
    for rank in range(ranks):
        info["rank"] = rank
        path = out / f"rank{rank}_trace.json"
        shutil.copyfile(shared, path)  # copy_file_range: no pass through Python
        with path.open("a", encoding="utf-8") as f:
            f.write(", " + json.dumps(header)[1:])  # the header's fields, then the closing }
        total += size
    shared.unlink()
    return total / 1e6, steps


def measure(trace_dir: Path, db: Path, top: int, root: Path = ROOT) -> dict:
    """One import of ``trace_dir`` by ``root``'s app/ (this tree's, or a baseline's)."""
    code = IMPORT.format(root=str(root), top=top)
    done = subprocess.run([sys.executable, "-c", code, str(trace_dir), str(db)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode or not done.stdout.strip():
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def growth(rows: list[tuple[int, int, dict]], key: str) -> list[str]:
    """Per pair of sizes: KB of peak RSS per rank-step added between them. Over more steps
    of the same ranks it includes one file's parse growing with its steps (kineto.py keeps a
    file's spans until its last event); over more ranks of the same steps, only what is
    held across ranks."""
    out = []
    for i, (ranks, steps, r) in enumerate(rows):
        for ranks2, steps2, r2 in rows[i + 1 :]:
            added = ranks2 * steps2 - ranks * steps
            if added > 0 and ranks2 >= ranks and steps2 >= steps and key in r and key in r2:
                kb = (r2[key] - r[key]) * 1024 / added
                out.append(f"{ranks}x{steps} -> {ranks2}x{steps2} rank-steps: "
                           f"{kb:+.1f} KB a rank-step")  # fmt: skip
    return out


def one_size(args, ranks: int, mb: int, base_root: Path | None, rows: list) -> None:
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp_path = Path(tmp)
        need = ranks * mb * 1.05e6
        if shutil.disk_usage(tmp_path).free < need + 2e9:
            print(f"| {ranks} x {mb} | skipped: {need / 1e9:.1f} GB not free ||||||||")
            return
        traces = tmp_path / "traces"
        traces.mkdir()
        t = time.perf_counter()
        total_mb, steps = write_ranks(ranks, mb, traces, tmp_path)
        made = time.perf_counter() - t
        r = measure(traces, tmp_path / "d.sqlite3", 0)
        if r["rc"]:
            raise SystemExit(f"{ranks} x {mb}: import exited {r['rc']}")
        if base_root:
            b = measure(traces, tmp_path / "b.sqlite3", 0, base_root)
            r["base_rss_mib"] = b["rss_mib"]
            r["base_cpu_s"] = b["cpu_s"]
        rows.append((ranks, steps, r))
        base = (f"{r['base_rss_mib']:.0f} | {total_mb / r['base_cpu_s']:.1f} |"
                if base_root else "- | - |")  # fmt: skip
        print(f"| {ranks} x {mb} | {total_mb:.0f} | {steps} | {r['s']:.1f} | "
              f"{r['cpu_s']:.1f} | {total_mb / r['cpu_s']:.1f} | {r['rss_mib']:.0f} | "
              f"{r['rss_mib'] - r['base_mib']:.0f} | {base}  (traces written in {made:.0f} s)",
              flush=True)  # fmt: skip
        if args.trace_top and (ranks, mb) == args.sizes_parsed[-1]:
            top = measure(traces, tmp_path / "t.sqlite3", args.trace_top)
            print(f"tracemalloc, {ranks} x {mb}: peak traced {top['peak_traced_mib']:.0f} "
                  "MiB; largest live before storing:")  # fmt: skip
            for line in top["top"]:
                print("  " + line.replace("\n", "\n  "))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", default=["4x50", "4x200", "16x50"],
                   help="RANKSxMB per import, e.g. 64x200")  # fmt: skip
    p.add_argument("--dir", default=None, help="where to write the traces (default: $TMPDIR)")
    p.add_argument("--baseline", default=None, metavar="REV",
                   help="also import with this git revision's app/, side by side")  # fmt: skip
    p.add_argument("--trace-top", type=int, default=0, metavar="N",
                   help="also run the last size under tracemalloc: its N top sites")  # fmt: skip
    args = p.parse_args()
    args.sizes_parsed = [tuple(int(x) for x in s.split("x")) for s in args.sizes]
    print("| ranks x MB | MB in all | steps/rank | wall s | CPU s | MB per CPU-s | "
          f"peak RSS MiB | over interpreter MiB | {args.baseline or 'baseline'}: peak RSS MiB "
          "| its MB per CPU-s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows: list = []
    with tempfile.TemporaryDirectory() as base_dir:
        base_root = unpack(args.baseline, Path(base_dir), "app") if args.baseline else None
        for ranks, mb in args.sizes_parsed:
            one_size(args, ranks, mb, base_root, rows)
    for line in growth(rows, "rss_mib"):
        print("peak RSS growth, this tree: " + line)
    for line in growth(rows, "base_rss_mib") if args.baseline else []:
        print(f"peak RSS growth, {args.baseline}: " + line)


if __name__ == "__main__":
    main()
