"""Importing a run's per-rank profiler traces: meshscope's importer (what `meshscope
import-trace` runs: read, label each collective's axis, align clocks, build the records)
beside Holistic Trace Analysis loading the same directory (`TraceAnalysis(trace_dir=...)`),
side by side in one run (issue 25's benchmark; not a test).

The traces are HTA's own published DDP/NCCL rank-0 trace (tests/fixtures/traces/hta,
MIT-licensed), written once per rank with its rank, world size and process-group members
set to that rank and a DP group of all of them, so both tools read real Kineto JSON of a
known size. Each tool runs in its own interpreter, timed in wall and CPU seconds (its child
processes included: HTA parses ranks in a multiprocessing pool), with its peak RSS (VmHWM,
and the largest child's).

HTA is not one of meshscope's dependencies: install it into any venv
(`python -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis`) and name that
interpreter with --hta-python; without it the HTA column is left out, and says so.

    python bench/bench_import_vs_hta.py [--ranks 8 32] [--hta-python /tmp/hta/bin/python]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "traces" / "hta" / "nccl_data.json.gz"

# Wall and CPU time of the work, with children, and the peak RSS of this process and of its
# largest child (ru_maxrss of RUSAGE_CHILDREN, KiB on Linux).
MEASURE = """
import json, os, resource, sys, time
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
def cpu():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
t, c = time.perf_counter(), cpu()
{work}
kid = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({{"s": time.perf_counter() - t, "cpu_s": cpu() - c, "rss_mib": hwm(),
                   "child_rss_mib": kid}}))
"""
OURS = """
import argparse
sys.path.insert(0, {root!r})
from app.importers.import_trace import prepare
args = argparse.Namespace(paths=[sys.argv[1]], run="bench", schedule="1f1b", microbatches=1,
                          dp={ranks}, tp=1, pp=1, order="tp-pp-dp", scenario=None,
                          gpus_per_node=8)
done = prepare(args)
assert len(done.records) > 0
"""
HTA = """
from hta.trace_analysis import TraceAnalysis
TraceAnalysis(trace_dir=sys.argv[1])
"""


def widened(ranks: int) -> dict:
    """HTA's two-rank DDP trace with its process group widened to ``ranks`` members."""
    with gzip.open(FIXTURE, "rb") as f:
        doc = json.load(f)
    members = str(list(range(ranks)))
    for e in doc["traceEvents"]:
        a = e.get("args", {})
        if a.get("Process Group Ranks") == "[0, 1]":
            a["Process Group Ranks"], a["Group size"] = members, ranks
    return doc


def write_ranks(ranks: int, out: Path) -> int:
    """One trace per rank, all of one DP group of ``ranks``; returns the bytes written."""
    doc = widened(ranks)
    info = doc["distributedInfo"]
    info["world_size"] = ranks
    info["pg_config"][0].update(pg_size=ranks, ranks=list(range(ranks)))
    total = 0
    for rank in range(ranks):
        info["rank"] = rank
        path = out / f"rank{rank}_trace.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        total += path.stat().st_size
    return total


def measure(python: str, work: str, trace_dir: Path) -> dict | str:
    code = MEASURE.format(work=work)
    done = subprocess.run([python, "-c", code, str(trace_dir)], capture_output=True, text=True)
    if done.returncode:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
    return json.loads(done.stdout.strip().splitlines()[-1])


def hta_available(python: str | None) -> bool:
    if not python:
        return False
    done = subprocess.run([python, "-c", "import hta.trace_analysis"], capture_output=True)
    return done.returncode == 0


def line(name: str, size_mb: float, r: dict | str) -> str:
    if isinstance(r, str):
        return f"| {name} | {r} | | | | |"
    per_core = size_mb / r["cpu_s"] if r["cpu_s"] else float("nan")
    rss = max(r["rss_mib"], r["child_rss_mib"])
    return (f"| {name} | {r['s']:.2f} | {r['cpu_s']:.2f} | {size_mb / r['s']:.1f} | "
            f"{per_core:.1f} | {rss:.0f} |")  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, nargs="+", default=[8, 32])
    p.add_argument("--hta-python", default=None, help="an interpreter with HTA installed")
    args = p.parse_args()
    hta = hta_available(args.hta_python)
    print("| tool, ranks | wall s | CPU s | MB/s | MB per CPU-s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for ranks in args.ranks:
        with tempfile.TemporaryDirectory() as tmp:
            size_mb = write_ranks(ranks, Path(tmp)) / 1e6
            ours = measure(sys.executable, OURS.format(root=str(ROOT), ranks=ranks), Path(tmp))
            print(line(f"meshscope, {ranks} ranks ({size_mb:.0f} MB)", size_mb, ours))
            if hta:
                print(line(f"HTA TraceAnalysis, {ranks} ranks", size_mb,
                           measure(args.hta_python, HTA, Path(tmp))))  # fmt: skip
    if not hta:
        print("HTA left out: pass --hta-python with an interpreter that has "
              "HolisticTraceAnalysis installed")  # fmt: skip


if __name__ == "__main__":
    main()
