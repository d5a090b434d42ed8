"""The planner with cp and ep (issue 27) in this tree beside another revision, in one run.

    python bench/bench_plan_axes.py [--base REV] [--head REV] [--rounds 3]

Targets: GPT-3 175B on 1,024 GPUs under 1 CPU-s (issue 23, 3D as before), and a 671B-class
mixture of experts on 2,048 GPUs under 2 CPU-s (issue 27). Each round runs every query once
in a fresh process per tree, the trees alternating; a figure is that process's CPU time for
one plan() after its imports. Printed per query: the median of the rounds per tree, head/base
(< 1: this tree is faster) and each tree's first row. --base defaults to the planner before
cp/ep were searched (MoE rows priced at ep = 1, no cp); queries the base cannot express (a
sequence length, a custom model) run in this tree only. --head REV times a committed
revision instead of the working tree (others' uncommitted edits apart).

The 671B-class model is the deepseek-v3 preset (MLA modelled, app/core/inputs/moe_models.py),
which the base revision has not got: it runs in this tree only, as do the queries with a
sequence length.
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

# The tree before the planner searched cp and ep (and before its issue-23 caches).
BASE = "9d6bdef"
# (label, model, hardware, gpus, global batch, Scenario fields editing the model, whether the
# base revision can run it)
QUERIES = (
    ("GPT-3 175B, 3D", "gpt3-175b", "a100-80g", 1024, 1536, None, True),
    ("Qwen3-235B-A22B", "qwen3-235b-a22b", "h100-sxm", 2048, 4096, None, True),
    ("Mixtral 8x22B", "mixtral-8x22b", "h100-sxm", 2048, 4096, None, True),
    ("DeepSeek-V3 671B", "deepseek-v3", "h100-sxm", 2048, 4096, None, False),
    ("Llama 3 70B at 128k", "llama3-70b", "h100-sxm", 1024, 256, {"seq_len": 131_072}, False),
)
HARNESS = r"""
import json, sys, time
from app.core.evaluate.planner import plan
model, hw, gpus, batch, shape = json.loads(sys.argv[1])
t0 = time.process_time()
result = plan(model, hw, gpus, batch, **({"shape": shape} if shape else {}))
cpu = time.process_time() - t0
row = result["results"][0] if result["results"] else None
best = None if row is None else {k: row["query"].get(k, "1") for k in ("cp", "ep")} | {
    k: row[k] for k in ("dp", "tp", "pp", "schedule", "tokens_per_s")}
print(json.dumps({"cpu": cpu, "searched": result["searched"], "best": best}))
"""


def one(tree: Path, query: tuple) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(query[1:6])], cwd=tree, check=True,
        capture_output=True, text=True, env={"PYTHONPATH": str(tree)},
    )  # fmt: skip
    return json.loads(done.stdout)


def _best(got: dict) -> str:
    b = got["best"]
    if b is None:
        return "no row fits"
    return (f"dp{b['dp']} tp{b['tp']} pp{b['pp']} cp{b['cp']} ep{b['ep']} {b['schedule']} "
            f"{b['tokens_per_s']:,.0f} tok/s")  # fmt: skip


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--base", default=BASE)
    args.add_argument("--head", default=None)
    args.add_argument("--rounds", type=int, default=3)
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = unpack(a.base, Path(tmp) / "base", "app")
        head = ROOT if a.head is None else unpack(a.head, Path(tmp) / "head", "app")
        name = a.head or "this tree"
        for query in QUERIES:
            trees = {name: head, a.base: base} if query[6] else {name: head}
            cpu: dict[str, list[float]] = {t: [] for t in trees}
            last: dict[str, dict] = {}
            for _ in range(a.rounds):
                for t, tree in trees.items():
                    last[t] = one(tree, query)
                    cpu[t].append(last[t]["cpu"])
            med = {t: statistics.median(xs) for t, xs in cpu.items()}
            line = (f"{query[0]} on {query[3]} x {query[2]}, batch {query[4]}: {name} "
                    f"{med[name]:.3f} CPU-s ({last[name]['searched']} searched; "
                    f"{_best(last[name])})")  # fmt: skip
            if a.base in med:
                old = med[a.base]
                line += (f" | {a.base} {old:.3f} CPU-s ({last[a.base]['searched']} searched; "
                         f"{_best(last[a.base])}), head/base {med[name] / old:.2f}")  # fmt: skip
            else:
                line += f" | {a.base}: cannot express this query"
            print(line + f", median of {a.rounds}", flush=True)


if __name__ == "__main__":
    main()
