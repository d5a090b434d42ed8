"""Trace import: throughput and peak memory of reading one Kineto trace, streamed
(app/importers/trace_stream.py, what `meshscope import-trace` does) beside ``json.load`` of
the same file, side by side in one run (not a test).

The trace is HTA's published DDP/NCCL rank-0 trace (tests/fixtures/traces/hta) with its
three profiled steps repeated ``--copies`` times (each copy shifted one trace length later,
its steps renumbered), written uncompressed to a temporary file. Each reader runs in its own
interpreter so its peak RSS (VmHWM) is its own.

    python bench/bench_import_trace.py [--copies 10]

Target (issue 25, Scale): memory bounded by what one rank keeps, not by the file.
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

READ = """
import json, sys, time
sys.path.insert(0, {root!r})
{hwm}
from pathlib import Path
from app.importers.trace_files import read
from app.core.traces import parse_rank
path = Path(sys.argv[1])
t = time.perf_counter()
if sys.argv[2] == "stream":
    trace = read(path)
else:
    with path.open("rb") as f:
        trace = parse_rank(json.load(f), str(path))
dt = time.perf_counter() - t
print(json.dumps({{"s": dt, "rss_mib": hwm(),
                  "steps": len(trace.steps)}}))
"""
# The peak RSS of this process since its exec (VmHWM): ru_maxrss would carry the parent's
# peak across the fork, and the parent has just held the whole synthetic trace.
HWM = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""
BASELINE = """
import json, sys
sys.path.insert(0, {root!r})
{hwm}
from app.importers.trace_files import read
from app.core.traces import parse_rank
print(json.dumps({{"rss_mib": hwm()}}))
"""


def synthetic(copies: int, out: Path) -> int:
    """Write the fixture's events ``copies`` times over; returns the file's bytes."""
    with gzip.open(FIXTURE, "rb") as f:
        doc = json.load(f)
    timed = [e for e in doc["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)
    events = []
    for k in range(copies):
        for e in doc["traceEvents"]:
            e = dict(e)
            if isinstance(e.get("ts"), (int, float)):
                e["ts"] += k * span
            if e.get("name", "").startswith("ProfilerStep#"):
                e["name"] = f"ProfilerStep#{int(e['name'].split('#')[1]) + 3 * k}"
            events.append(e)
    doc["traceEvents"] = events
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out.stat().st_size


def run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=10)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rank0_trace.json"
        size_mb = synthetic(args.copies, path) / 1e6
        base = run(BASELINE.format(root=str(ROOT), hwm=HWM))["rss_mib"]
        rows = {
            how: run(READ.format(root=str(ROOT), hwm=HWM), str(path), how)
            for how in ("stream", "load")
        }
    print(f"trace: {size_mb:.1f} MB of JSON, {rows['stream']['steps']} steps; "
          f"interpreter with the importer imported: {base:.0f} MiB")  # fmt: skip
    print(f"{'reader':<10}{'MB/s':>8}{'peak RSS MiB':>14}{'over base':>11}")
    for how, r in rows.items():
        print(f"{how:<10}{size_mb / r['s']:>8.1f}{r['rss_mib']:>14.0f}{r['rss_mib'] - base:>11.0f}")
    s, whole = rows["stream"], rows["load"]
    print(f"stream / load: time {s['s'] / whole['s']:.2f}x, memory over base "
          f"{(s['rss_mib'] - base) / max(whole['rss_mib'] - base, 1e-9):.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
