"""Where a scenario goes inside the core: the modules evaluate() runs code in, and how often
it comes back to one it had already left, in this tree or at another revision.

    python bench/trace_stages.py [--rev REV] [--query "pp=4&microbatches=8"]

Every call from one module of app/core into another is an entry (generators' resumptions are
left out); an entry counts as coming back when that module had been entered before. It prints
the modules visited, the count of comebacks, and the modules most re-entered. Not a test:
tests/core/test_stage_order.py holds the rule (stages in order at the driver); this prints the
finer picture for comparison across revisions.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from revision import unpack  # noqa: E402  (bench/ is the script's folder)

TRACER = r"""
import json, sys
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qsl
from app.core.evaluate import evaluate
try:
    from app.core.inputs.scenario import Scenario
except ImportError:
    from app.core.scenario import Scenario

core = Path("app/core").resolve()
s = Scenario(**dict(parse_qsl(sys.argv[1])))
seq = []

def module(frame):
    path = Path(frame.f_code.co_filename)
    return str(path.relative_to(core)) if core in path.parents else None

def profile(frame, event, arg):
    # Calls only, generators' resumptions left out: an entry is one module calling another.
    if event != "call" or frame.f_code.co_flags & 0x20:
        return
    here, caller = module(frame), module(frame.f_back) if frame.f_back else None
    if here and here != caller:
        seq.append(here)

sys.setprofile(profile)
evaluate(s)
sys.setprofile(None)
seen, again = set(), Counter()
for m in seq:
    if m in seen:
        again[m] += 1
    seen.add(m)
print(json.dumps({"modules": len(seen), "comebacks": sum(again.values()),
                  "top": again.most_common(8)}))
"""


def tree_of(rev: str | None, into: Path) -> Path:
    return ROOT if rev is None else unpack(rev, into)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default=None, help="a git revision (default: this tree)")
    ap.add_argument("--query", default="pp=4&microbatches=8")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = tree_of(args.rev, Path(tmp))
        done = subprocess.run(
            [sys.executable, "-c", TRACER, args.query], cwd=tree, capture_output=True,
            text=True, env={"PYTHONPATH": str(tree)}, check=True,
        )  # fmt: skip
    result = json.loads(done.stdout)
    print(f"{args.rev or 'this tree'}, ?{args.query}: {result['modules']} modules, "
          f"{result['comebacks']} comebacks to a module already left")  # fmt: skip
    for name, n in result["top"]:
        print(f"  {name}: {n}")


if __name__ == "__main__":
    main()
