"""measured.breakdown per record (not a test), side by side: a probe-shaped 3D record, the same
record with its TP pulses relabelled cp and ep (the wide sweep: seven levels instead of
four), and, when given a git revision, that revision's breakdown on the 3D record.

The breakdown runs on every stored record (app/live/store.py), so issue 25's cp/ep must not
slow a 3D run's: the 3D sweep is the one it always was, and the ratio against the revision
before cp/ep (``--before 2d41784``) is what the store pays for them.

    python bench/bench_breakdown_cp_ep.py [--before REV] [--repeat 7] [--number 300]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "live"))

from support import records, run_info  # noqa: E402

from app.core.fidelity import measured  # noqa: E402
from app.core.inputs.protocol import ProbeRecord  # noqa: E402


def _records() -> tuple[list[ProbeRecord], list[ProbeRecord]]:
    """One step of dp1 x tp2 x pp4, 1f1b, m=8 (~58 events a record), and the same with
    every other TP pulse a cp exchange and every third an ep all-to-all."""
    info = run_info("bench", dp=1, tp=2, pp=4, m=8)
    plain = [ProbeRecord.model_validate(r) for r in records(info, 1)]
    wide = []
    for r in plain:
        pulses = 0
        events = []
        for e in r.events:
            if e.kind == "tp":
                pulses += 1
                kind = "ep" if pulses % 3 == 0 else "cp" if pulses % 2 == 0 else "tp"
                e = e.model_copy(update={"kind": kind})
            events.append(e)
        wide.append(r.model_copy(update={"events": events}))
    return plain, wide


def _module_at(rev: str):
    """app/core/fidelity/measured.py as it was at ``rev``, imported on its own."""
    text = subprocess.run(["git", "show", f"{rev}:app/core/fidelity/measured.py"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "measured_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("measured_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["measured_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _us(fn, recs, repeat: int, number: int) -> float:
    best = min(timeit.repeat(lambda: [fn(r) for r in recs], number=number, repeat=repeat))
    return best / number / len(recs) * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default=None, help="a git revision to compare the 3D sweep with")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--number", type=int, default=300)
    args = p.parse_args()
    plain, wide = _records()
    now = _us(measured.breakdown, plain, args.repeat, args.number)
    cols = [("3D record", now), ("cp/ep record", _us(measured.breakdown, wide, args.repeat,
                                                       args.number))]  # fmt: skip
    if args.before:
        old = _module_at(args.before)
        cols.insert(0, (f"3D at {args.before}", _us(old.breakdown, plain, args.repeat,
                                                      args.number)))  # fmt: skip
    print("us per record (best of repeats):", "   ".join(f"{n} {v:.2f}" for n, v in cols))
    print("ratios to the first:", "   ".join(f"{n} {v / cols[0][1]:.3f}" for n, v in cols))


if __name__ == "__main__":
    main()
