"""The planner with cp, ep, HSDP and FP8 (issue 27) in this tree beside another revision.

    python bench/bench_plan_axes.py [--base REV] [--head REV] [--rounds 3] [--quick]

Targets: GPT-3 175B on 1,024 GPUs under 1 CPU-s (issue 23, 3D as before), and a 671B-class
mixture of experts on 2,048 GPUs under 2 CPU-s (issue 27), HSDP searched and, with
fp8=search, FP8 too. Each round runs every query once in a fresh process per tree, the
trees alternating; a figure is that process's CPU time for searched() and plan() after its
imports. Printed per query: the median of the rounds per tree, head/base (< 1: this tree is
faster) and each tree's first row. --base defaults to the planner before it searched HSDP
and FP8 (BASE); queries the base cannot express run in this tree only, and fp8=search runs
in the base as its bf16 plan (it has no FP8 search). --head REV times a committed revision
instead of the working tree (others' uncommitted edits apart). --quick: GPT-3 and the 671B
rows only.

The 671B-class model is the deepseek-v3 preset (MLA modelled, app/core/inputs/moe_models.py).
A base must have planner.searched(..., shape, fp8) and that preset (from BASE's time on).
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

# The tree before the planner searched HSDP and FP8 (cp and ep searched, deepseek-v3 there).
BASE = "313d6b1"
# (label, model, hardware, gpus, global batch, Scenario fields editing the model, fp8 (none or
# search), whether the base revision can run it, whether --quick runs it)
QUERIES = (
    ("GPT-3 175B, 3D", "gpt3-175b", "a100-80g", 1024, 1536, None, "none", True, True),
    ("Qwen3-235B-A22B", "qwen3-235b-a22b", "h100-sxm", 2048, 4096, None, "none", True, False),
    ("Mixtral 8x22B", "mixtral-8x22b", "h100-sxm", 2048, 4096, None, "none", True, False),
    ("DeepSeek-V3 671B", "deepseek-v3", "h100-sxm", 2048, 4096, None, "none", True, True),
    ("DeepSeek-V3 671B, fp8=search", "deepseek-v3", "h100-sxm", 2048, 4096, None, "search",
     True, True),
    ("Llama 3 70B at 128k", "llama3-70b", "h100-sxm", 1024, 256, {"seq_len": 131_072}, "none",
     True, False),
)  # fmt: skip
# As app/api/plan.py runs it: searched() (the pool, counted against the server's bound),
# then plan() with the FP8 recipes when searched. A tree without planner_fp8 plans bf16.
HARNESS = r"""
import json, sys, time
from app.core.evaluate.planner import plan, searched
from app.core.inputs.presets import HARDWARE
model, hw, gpus, batch, shape, fp8 = json.loads(sys.argv[1])
try:
    from app.core.evaluate.planner_fp8 import recipes
    more = {"recipes": recipes(HARDWARE[hw])} if fp8 == "search" else {}
except ImportError:
    more = {}
t0 = time.process_time()
found = searched(model, hw, gpus, batch, HARDWARE, shape, "none")
result = plan(model, hw, gpus, batch, registry=HARDWARE, search=found, shape=shape, **more)
cpu = time.process_time() - t0
row = result["results"][0] if result["results"] else None
best = None if row is None else {k: row["query"].get(k, d) for k, d in (
    ("cp", "1"), ("ep", "1"), ("dp_shard", "-"), ("fp8", "none"))} | {
    k: row[k] for k in ("dp", "tp", "pp", "schedule", "tokens_per_s")}
print(json.dumps({"cpu": cpu, "searched": result["searched"], "best": best}))
"""


def one(tree: Path, query: tuple) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(query[1:7])], cwd=tree, check=True,
        capture_output=True, text=True, env={"PYTHONPATH": str(tree)},
    )  # fmt: skip
    return json.loads(done.stdout)


def _best(got: dict) -> str:
    b = got["best"]
    if b is None:
        return "no row fits"
    return (f"dp{b['dp']} tp{b['tp']} pp{b['pp']} cp{b['cp']} ep{b['ep']} "
            f"dp_shard {b.get('dp_shard', '-')} fp8 {b.get('fp8', 'none')} {b['schedule']} "
            f"{b['tokens_per_s']:,.0f} tok/s")  # fmt: skip


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--base", default=BASE)
    args.add_argument("--head", default=None)
    args.add_argument("--rounds", type=int, default=3)
    args.add_argument("--quick", action="store_true", help="GPT-3 and the 671B rows only")
    a = args.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = unpack(a.base, Path(tmp) / "base", "app")
        head = ROOT if a.head is None else unpack(a.head, Path(tmp) / "head", "app")
        name = a.head or "this tree"
        for query in QUERIES:
            if a.quick and not query[8]:
                continue
            trees = {name: head, a.base: base} if query[7] else {name: head}
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
