"""The cost model against published measured runs, side by side in one run: this model, the
previous one (its code at a git revision, run in a subprocess) and a flat 50%-of-peak
estimate. `--fit` searches each hardware profile's GEMM ceiling and reports it in-sample and
leave-one-source-out, which is how the constants in app/core/inputs/hardware.py were chosen.

    python bench/fidelity.py [--previous REV] [--fit] [--rows]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from dataclasses import replace
from io import BytesIO
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.fidelity import board as fidelity  # noqa: E402
from app.core.inputs import hardware  # noqa: E402

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
    archive = subprocess.run(
        ["git", "archive", rev, "app"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        done = subprocess.run(
            [sys.executable, "-c", OLD_RUNNER], cwd=tmp, input=json.dumps(queries),
            capture_output=True, text=True, check=True, env={"PYTHONPATH": tmp},
        )  # fmt: skip
    return json.loads(done.stdout)


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


def with_gemm_ceiling(name: str, ceiling: float) -> MappingProxyType:
    """The presets with one profile's GEMM ceiling swapped in, for a search."""
    table = dict(hardware.HARDWARE)
    hw = table[name]
    table[name] = replace(hw, efficiency=replace(hw.efficiency, gemm_max_fraction=ceiling))
    return MappingProxyType(table)


def pick_ceiling(grid: list[float], errors: dict[float, list[float]]) -> float:
    """The issue's two targets as the criterion: the least median |error| among the ceilings
    whose max |error| is within 15%; if none is, the least max."""
    stats = {c: fidelity.summary(errors[c]) for c in grid}
    ok = [c for c in grid if stats[c]["max_abs"] is not None and stats[c]["max_abs"] <= 0.15]
    if ok:
        return min(ok, key=lambda c: stats[c]["median_abs"])
    return min(grid, key=lambda c: stats[c]["max_abs"] or 0.0)


def fit() -> None:
    """Per profile, pick_ceiling in-sample and with each source held out in turn (its rows
    predicted by the ceiling picked on the others); n/a where one source is all there is."""
    grid = [round(0.55 + 0.01 * i, 2) for i in range(36)]
    for name in sorted({r.hardware for r in fidelity.rows() if not r.reason}):
        errors = {}
        for c in grid:
            errors[c] = [(fidelity.source_family(r.run), r.error)
                         for r in fidelity.rows(with_gemm_ceiling(name, c))
                         if not r.reason and r.hardware == name]  # fmt: skip
        best = pick_ceiling(grid, {c: [e for _, e in errors[c]] for c in grid})
        sources = sorted({s for s, _ in errors[best]})
        held = []
        for src in sources if len(sources) > 1 else ():
            others = {c: [e for s, e in errors[c] if s != src] for c in grid}
            held += [e for s, e in errors[pick_ceiling(grid, others)] if s == src]
        now = hardware.HARDWARE[name].efficiency.gemm_max_fraction
        out = line("", held) if held else "n/a (one source)"
        print(f"{name} (preset {now}, {len(sources)} sources): ceiling {best} -> in-sample "
              f"{line('', [e for _, e in errors[best]])} held-out {out}")  # fmt: skip


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", default=None, help="git revision of the previous model")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args()
    if args.fit:
        fit()
    else:
        report(args.previous or previous_rev(), args.rows)
