"""The planner's CPU seconds in this tree beside another revision's, in one run.

    python bench/bench_plan_revision.py [--base REV] [--head REV] [--rounds 5]

Target (issue 23): GPT-3 175B on 1,024 GPUs under 1 s. Each round runs every query once in a
fresh process per tree, the two trees alternating so a busy neighbour's drift falls on both;
a figure is that process's CPU time for one plan() after its imports (cold caches, as a
server's first request of that shape). Printed: the median of the rounds per tree and
head/base (< 1: this tree is faster). --base defaults to the planner before planner_pass;
--head REV times that revision instead of the working tree (others' uncommitted edits apart).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from revision import ROOT, unpack  # noqa: E402  (bench/ is the script's folder)

# The planner as it was before planner_pass.py (every candidate fully priced).
BASE = "1837c93"
QUERIES = (
    ("gpt3-175b", "a100-80g", 1024, 1536),  # the target
    ("llama3-70b", "h100-sxm", 256, 512),
    ("gpt3-13b", "a100-80g", 64, 256),
)
HARNESS = r"""
import json, sys, time
from app.core.evaluate.planner import plan
model, hw, gpus, batch = json.loads(sys.argv[1])
t0 = time.process_time()
result = plan(model, hw, gpus, batch)
cpu = time.process_time() - t0
print(json.dumps({"cpu": cpu, "searched": result["searched"], "fitting": result["fitting"]}))
"""


def one(tree: Path, query: tuple) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(query)], cwd=tree, check=True,
        capture_output=True, text=True, env={"PYTHONPATH": str(tree)},
    )  # fmt: skip
    return json.loads(done.stdout)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--base", default=BASE)
    args.add_argument("--head", default=None)
    args.add_argument("--rounds", type=int, default=5)
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = unpack(a.base, Path(tmp) / "base", "app")
        head = ROOT if a.head is None else unpack(a.head, Path(tmp) / "head", "app")
        trees = {"this tree": head, a.base: base}
        for query in QUERIES:
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(a.rounds):
                for name, tree in trees.items():
                    got = one(tree, query)
                    cpu[name].append(got["cpu"])
            med = {name: statistics.median(xs) for name, xs in cpu.items()}
            new, old = med["this tree"], med[a.base]
            print(f"{query[0]} on {query[2]} x {query[1]}, batch {query[3]} "
                  f"({got['searched']} configurations): {a.head or 'this tree'} {new:.3f} CPU-s, "
                  f"{a.base} {old:.3f} CPU-s, head/base {new / old:.2f} "
                  f"(x{old / new:.2f} faster), median of {a.rounds}")  # fmt: skip


if __name__ == "__main__":
    main()
