"""The primer's cost beside evaluate's for the same scenario, and its JSON size.

Run: .venv/bin/python bench/bench_primer.py   (prints one row per scenario; ratios only mean
something side by side in one run on one machine)."""

from __future__ import annotations

import json
import time

from app.core.evaluate import evaluate
from app.core.evaluate.primer import PrimerParams, primer
from app.core.inputs.scenario import Scenario

CASES = (
    {},
    {"dp": 16, "tp": 8, "pp": 8, "microbatches": 64},
    {"dp": 8, "tp": 8, "pp": 64, "microbatches": 512, "model": "llama3-405b"},
)


def best_of(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    print(f"{'scenario':58} {'primer ms':>10} {'evaluate ms':>12} {'ratio':>6} {'JSON KB':>8}")
    for query in CASES:
        s = Scenario(**query)
        view = primer(s, PrimerParams())
        a = best_of(lambda s=s: primer(s, PrimerParams()))
        b = best_of(lambda s=s: evaluate(s))
        size = len(json.dumps(view)) / 1e3
        name = json.dumps(query) if query else "default"
        print(f"{name:58} {a * 1e3:10.1f} {b * 1e3:12.1f} {a / b:6.2f} {size:8.0f}")


if __name__ == "__main__":
    main()
