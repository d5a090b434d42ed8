"""The cost model against published measured runs, side by side in one run: this model, the
previous one (its code at a git revision, run in a subprocess) and a flat 50%-of-peak
estimate. `--fit` searches each generation's GEMM ceiling and reports it in-sample and
leave-one-source-out (app/core/fidelity/fit.py, the same code the accuracy board's held-out
figures come from), which is how the constants in app/core/inputs/hardware.py were chosen;
`--brute` also prices every row at every ceiling of the grid and checks the fit's bounds.

    python bench/fidelity.py [--previous REV] [--fit [--brute]] [--rows]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from revision import run_at  # noqa: E402  (bench/ is the script's folder)

from app.core.fidelity import board as fidelity  # noqa: E402
from app.core.fidelity import fit as core_fit  # noqa: E402

# Run inside the previous revision's tree: its Scenario knows fewer fields, and a custom
# shape there is a preset with overrides (GPT-3 for GeLU models, Llama 3 for SwiGLU ones).
OLD_RUNNER = """
import json, sys
from app.core.evaluate import evaluate
from app.core.scenario import Scenario
known = set(Scenario.model_fields)
out = []
for q in json.load(sys.stdin):
    if q.get("model") == "custom":
        q["model"] = "llama3-8b" if q.get("gated_mlp") == "true" else "gpt3-175b"
    try:
        out.append(evaluate(Scenario(**{k: v for k, v in q.items() if k in known}))["step_time_s"])
    except Exception as exc:  # a row the old model refused
        out.append(None)
print(json.dumps(out))
"""


def previous_rev() -> str:
    """HEAD while it still holds the old cost model (app/core/costs_time.py), else the commit
    before the one that removed it."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)

    if git("cat-file", "-e", "HEAD:app/core/costs_time.py").returncode == 0:
        return "HEAD"
    gone = git("rev-list", "-1", "HEAD", "--", "app/core/costs_time.py").stdout.strip()
    return f"{gone}^"


def previous_predictions(rev: str, queries: list[dict[str, str]]) -> list[float | None]:
    return run_at(rev, OLD_RUNNER, queries)


def line(name: str, errors: list[float]) -> str:
    s = fidelity.summary(errors)
    if not s["rows"]:
        return f"| {name} | 0 | | | |"
    return (
        f"| {name} | {s['rows']} | {s['median_abs']:.1%} | {s['max_abs']:.1%} "
        f"| {s['within_10pct']} |"
    )


def by_source(rows, errors) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for r, e in zip(rows, errors, strict=True):
        if e is not None:
            out[fidelity.source_family(r.run)].append(e)
    return out


def report(rev: str, show_rows: bool) -> None:
    rows = [r for r in fidelity.rows() if not r.reason]
    old = previous_predictions(rev, [r.query for r in rows])
    old_err = [
        None if p is None else (p - r.published_s) / r.published_s
        for r, p in zip(rows, old, strict=True)
    ]
    models = {
        "this model": [r.error for r in rows],
        f"previous model ({rev})": old_err,
        "flat 50% of peak": [r.baseline_error for r in rows],
    }
    print("| model | rows | median abs error | max abs error | within 10% |\n|---|---|---|---|---|")
    for name, errs in models.items():
        print(line(name, [e for e in errs if e is not None]))
    print("\n| source | model | rows | median abs error | max abs error | within 10% |")
    print("|---|---|---|---|---|---|")
    for name, errs in models.items():
        for src, e in sorted(by_source(rows, errs).items()):
            print(f"| {src} " + line(name, e))
    fp8_report(rows, models)
    cp_report(rows, models)
    left = [r for r in fidelity.rows() if r.reason]
    print(f"\n{len(rows)} rows predicted; {len(left)} left out:")
    for reason in sorted({r.reason for r in left}):
        print(f"- {reason}: {sum(r.reason == reason for r in left)}")
    if show_rows:
        for r, p in zip(rows, old, strict=True):
            a = r.run
            prev = "-" if p is None else f"{p:.2f}"
            print(f"{a.source[:34]:34} {a.arch.name[:16]:16} {a.gpus:5} t{a.tp} p{a.pp} d{a.dp} "
                  f"pub {r.published_s:.2f} new {r.predicted_s:.2f} ({r.error:+.0%}) "
                  f"old {prev} base {r.baseline_s:.2f}")  # fmt: skip


def fp8_report(rows, models: dict[str, list]) -> None:
    """The FP8 rows (issue 27) apart, per source: each model, and this model with the rows
    priced as 16-bit (fp8=none), which is what FP8 costs the prediction."""
    mine = [i for i, r in enumerate(rows) if r.run.precision == "fp8"]
    if not mine:
        return
    as_16 = []
    for i in mine:
        s = fidelity.scenario_of(rows[i].run).model_copy(
            update={"fp8": "none", "fp8_scaling": "delayed"}
        )
        as_16.append((fidelity.Pricer(s).step_s - rows[i].published_s) / rows[i].published_s)
    print("\n| FP8 rows, source | model | rows | median abs error | max abs error | within 10% |")
    print("|---|---|---|---|---|---|")
    fp8_models = {name: [errs[i] for i in mine] for name, errs in models.items()}
    fp8_models["this model, priced as 16-bit"] = as_16
    for name, errs in fp8_models.items():
        for src, e in sorted(by_source([rows[i] for i in mine], errs).items()):
            print(f"| {src} " + line(name, e))


def cp_report(rows, models: dict[str, list]) -> None:
    """The context-parallel rows (issue 27) apart, per source, each with its cp."""
    mine = [i for i, r in enumerate(rows) if r.run.cp > 1]
    if not mine:
        return
    print("\n| CP rows, source | model | rows | median abs error | max abs error | within 10% |")
    print("|---|---|---|---|---|---|")
    for name, errs in models.items():
        picked = [errs[i] for i in mine]
        for src, e in sorted(by_source([rows[i] for i in mine], picked).items()):
            print(f"| {src} " + line(name, [x for x in e if x is not None]))


def fit(brute: bool) -> None:
    """Per generation, the ceiling picked on every row (in-sample) and with each source held
    out in turn (its rows predicted at the ceiling picked on the others), as fit.py computes
    them for the board; with ``brute``, every row priced at every ceiling to check them."""
    t0 = time.process_time()
    f = core_fit.fitted(in_sample=True)
    took = time.process_time() - t0
    idx = sorted(f.curves)
    for gen, best in sorted(f.in_sample.items()):
        mine = [i for i in idx if f.group(i) == gen]
        rows = [f.rows[i] for i in mine]
        sources = sorted({fidelity.source_family(r.run) for r in rows})
        preset = {r.run.hardware: f.registry[r.hardware].efficiency.gemm_max_fraction for r in rows}
        at_best = [(f.value(i, best) - f.rows[i].published_s) / f.rows[i].published_s for i in mine]
        held = [r.held_out_error for r in rows if r.held_out_error is not None]
        print(f"{gen} (preset {sorted(set(preset.values()))}, {len(sources)} sources): ceiling "
              f"{best} -> in-sample {line('', at_best)} held-out {line('', held)}")  # fmt: skip
        for src in sources:
            # Held out by origin: a source's MoE rows leave with its dense ones (fit.fit).
            c, pool = f.held_out[(gen, src.removesuffix(" MoE"))]
            errs = [r.held_out_error for r in rows if fidelity.source_family(r.run) == src]
            on = "its generation's other sources" if pool == "generation" else "every other source"
            print(f"  {src}: held out at {c} (fitted on {on}) {line('', errs)}")
    every = [r for r in f.rows if r.held_out_error is not None]
    print(
        f"all: in-sample {line('', [r.error for r in every])} "
        f"held-out {line('', [r.held_out_error for r in every])}"
    )
    print(
        f"fit: {took:.1f} s of CPU, {sum(len(f.curves[i].points) for i in idx)} pricings "
        f"for {len(idx)} rows x {len(f.grid)} ceilings"
    )
    if brute:
        check_brute(f)


def check_brute(f: core_fit.Fitted) -> None:
    """Every row at every ceiling: the fit's bounds hold, its known values and picks agree."""
    idx, grid = sorted(f.curves), f.grid
    table: dict[int, dict[float, float]] = {}
    worst = 0.0
    for i in idx:
        pricer = fidelity.priced(f.rows[i].run, f.registry)[1]
        table[i] = {c: pricer.at(c) for c in grid}
        for c, v in table[i].items():
            lo, hi = f.curves[i].bounds(c)
            assert lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9), (f.rows[i].run.id, c, lo, v, hi)
            if lo == hi:
                worst = max(worst, abs(hi - v) / v)

    def errors(on: list[int]) -> dict[float, list[float]]:
        return {c: [(table[j][c] - f.rows[j].published_s) / f.rows[j].published_s for j in on]
                for c in grid}  # fmt: skip

    family = {i: fidelity.origin(f.rows[i].run) for i in idx}
    for (gen, src), (c, pool) in f.held_out.items():
        on = [i for i in idx if family[i] != src and core_fit.fits_on(f.rows[i])
              and (pool == "all" or f.group(i) == gen)]  # fmt: skip
        assert core_fit.pick_ceiling(errors(on), grid) == c, (gen, src)
    for gen, c in f.in_sample.items():
        on = [i for i in idx if f.group(i) == gen and core_fit.fits_on(f.rows[i])]
        assert core_fit.pick_ceiling(errors(on), grid) == c
    print(
        f"brute force: {len(idx)} rows x {len(grid)} ceilings agree with the fit's bounds and "
        f"picks; known values within {worst:.1e} (relative)"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", default=None, help="git revision of the previous model")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--brute", action="store_true", help="with --fit: check it on every ceiling")
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args()
    if args.fit:
        fit(args.brute)
    else:
        report(args.previous or previous_rev(), args.rows)
        # Memory, printed apart from time (bench/fidelity_memory.py, published_memory.json).
        from fidelity_memory import memory_report
        from fidelity_memory import previous_rev as memory_rev

        memory_report(memory_rev(), args.rows)
