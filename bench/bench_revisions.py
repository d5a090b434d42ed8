"""This tree's core, planner and page timings beside another revision's, in one run.

    python bench/bench_revisions.py [--base REV] [--head REV] [--rounds 5] [--pages]

Each revision is checked out with `git archive` into a temporary folder; the same harness
runs in a fresh process per revision per round, the two alternating, so the box's drift
falls on both; each figure is the process's CPU time (best of a few calls), which a busy
neighbour disturbs far less than wall time. It times, through the entry points both revisions share:

* build + simulate of interleaved 1F1B at p=64, m=512, v=4 (bench_core.py's largest size);
* evaluate() of the default scenario and of a 1,024-GPU interleaved one;
* the planner: GPT-3 175B on 1,024 A100s (bench_plan.py's first query);
* the server's render of /, /flow and /compare?preset=schedules (TestClient, no browser).

It prints the median of each per revision and head/base (< 1: head is faster). `--pages`
also runs bench/bench_pages.py (first draw in Chromium) in each tree, one after the other.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from revision import unpack  # noqa: E402  (bench/ is the script's folder)

HARNESS = r"""
import json, sys, tempfile, time
from pathlib import Path
from app.core.evaluate import evaluate
from app.core.inputs_or_scenario import Scenario
try:
    from app.core.evaluate.planner import plan
except ImportError:
    from app.core.planner import plan
from app.core.schedules import build
from app.core.simulate import Durations, simulate

def timed(fn, reps):
    # CPU time of this process: on a shared box, wall time mostly measures the neighbours.
    best = []
    for _ in range(reps):
        t0 = time.process_time(); fn(); best.append(time.process_time() - t0)
    return min(best)

out = {}
costs = Durations(1, 2, 0, 0.1)  # bench_core.py's
out["build+simulate p64 m512 v4"] = timed(
    lambda: simulate("interleaved", build("interleaved", 64, 512, 4), costs, 4), 3)
out["evaluate default"] = timed(lambda: evaluate(Scenario()), 5)
big = Scenario(dp=16, tp=8, pp=8, microbatches=32, schedule="interleaved", virtual_stages=2)
out["evaluate 1,024 GPUs"] = timed(lambda: evaluate(big), 3)
out["plan gpt3-175b 1,024 a100"] = timed(lambda: plan("gpt3-175b", "a100-80g", 1024, 1536), 1)
from fastapi.testclient import TestClient
from app.main import create_app
from app.settings import Settings
with tempfile.TemporaryDirectory() as tmp:
    with TestClient(create_app(Settings(db=Path(tmp) / "b.sqlite3"))) as client:
        for name, url in (("page /", "/"), ("page /flow", "/flow?pp=8&microbatches=32"),
                          ("page /compare schedules", "/compare?preset=schedules")):
            client.get(url)
            out[name] = timed(lambda: client.get(url), 5)
print(json.dumps(out))
"""


def tree(rev: str, into: Path) -> Path:
    """``rev`` ("WORKTREE" for the files as they are) as a folder of its own."""
    return ROOT if rev == "WORKTREE" else unpack(rev, into)


def harness_for(tree: Path) -> str:
    """The harness with the Scenario import each tree has (app.core.scenario moved to
    app.core.inputs.scenario when the core became stage packages)."""
    moved = (tree / "app" / "core" / "inputs" / "scenario.py").exists()
    where = "app.core.inputs.scenario" if moved else "app.core.scenario"
    return HARNESS.replace("app.core.inputs_or_scenario", where)


def run_once(tree: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", harness_for(tree)], cwd=tree, capture_output=True, text=True,
        env={"PYTHONPATH": str(tree), "PATH": str(Path(sys.executable).parent)}, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"harness failed in {tree}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(base: list[dict[str, float]], head: list[dict[str, float]], names: tuple[str, str]):
    print(f"| measure | {names[0]} (ms) | {names[1]} (ms) | head/base |")
    print("|---|---|---|---|")
    for key in base[0]:
        b = statistics.median(r[key] for r in base) * 1e3
        h = statistics.median(r[key] for r in head) * 1e3
        print(f"| {key} | {b:.1f} | {h:.1f} | {h / b:.2f} |")


def pages(trees: dict[str, Path]) -> None:
    for name, tree in trees.items():
        print(f"\n## bench_pages.py in {name}")
        done = subprocess.run(
            [sys.executable, "bench/bench_pages.py", "--requests", "200", "--clients", "10"],
            cwd=tree, capture_output=True, text=True, timeout=900,
            env={"PYTHONPATH": str(tree), "PATH": str(Path(sys.executable).parent) + ":/usr/bin"},
        )  # fmt: skip
        print(done.stdout[-3000:] or done.stderr[-2000:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD~1")
    ap.add_argument("--head", default="WORKTREE")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pages", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = tree(args.base, Path(tmp) / "base")
        head = tree(args.head, Path(tmp) / "head")
        runs: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
        for _ in range(args.rounds):
            runs["base"].append(run_once(base))
            runs["head"].append(run_once(head))
        print(f"{args.rounds} alternating rounds, best of a few calls each, median over rounds\n")
        table(runs["base"], runs["head"], (args.base, args.head))
        if args.pages:
            pages({args.base: base, args.head: head})


if __name__ == "__main__":
    main()
