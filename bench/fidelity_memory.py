"""The memory model against published, measured per-GPU memory (app/core/fidelity/
published_memory.json, predicted by app/core/fidelity/memory_board.py), beside the previous
memory model (its code at a git revision, run in a subprocess on the same scenarios).
bench/fidelity.py prints this after its time tables; alone:

    python bench/fidelity_memory.py [--previous REV] [--rows]

Per source family: median and max |error| of the measured figure (allocated, reserved or
nvidia-smi, as each row measured it), rows within 10%, and the fit-or-OOM calls: every
published OOM must be predicted not to fit and every run that ran to fit. Nothing is fitted
on these rows (the constants are cited in app/core/cost/memory_transients.py and
app/core/inputs/hardware.py), so there is no leave-one-source-out figure to report.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from revision import run_at  # noqa: E402  (bench/ is the script's folder)

from app.core.fidelity import memory_board as board  # noqa: E402

GIB = 1 << 30
# Run inside the previous revision's tree: its Scenario knows fewer fields, its hardware
# spec has no memory floor; the profiles the presets lack are rebuilt from their figures.
# Its one figure per stage is total_bytes (weights + grads + optimizer + activations).
OLD_RUNNER = """
import json, sys
from dataclasses import fields
from types import MappingProxyType
from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE, Efficiency, HardwareSpec
from app.core.inputs.scenario import Scenario
known, spec_fields = set(Scenario.model_fields), {f.name for f in fields(HardwareSpec)}
out = []
for q, profile, stage in json.load(sys.stdin):
    table = dict(HARDWARE)
    if profile["name"] not in table:
        fig = {k: v for k, v in profile.items() if k in spec_fields and k != "efficiency"}
        table[profile["name"]] = HardwareSpec(**fig, efficiency=Efficiency(**profile["efficiency"]))
    try:
        mem = evaluate(Scenario(**{k: v for k, v in q.items() if k in known}),
                       MappingProxyType(table))["memory"]
        top = mem["per_stage"][-1] if stage == "last" else max(
            mem["per_stage"], key=lambda s: s["total_bytes"])
        out.append([top["total_bytes"], mem["fits"]])
    except Exception:  # a row the old model refused
        out.append(None)
print(json.dumps(out))
"""


def previous_rev() -> str:
    """The commit before the memory rebuild (the one that added memory_states.py), or HEAD
    while it has not been committed."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout

    added = git("log", "--diff-filter=A", "--format=%H", "--", "app/core/cost/memory_states.py")
    first = added.split()
    return f"{first[-1]}^" if first else "HEAD"


def previous_predictions(rev: str, results: list[board.MemoryRowResult]) -> list[list | None]:
    """[total bytes of the logged GPU, fits] of each predicted row under the model at rev."""
    jobs = []
    for r in results:
        name = r.query.get("hardware", "h100-sxm")
        profile = asdict(board.REGISTRY[name])
        stage = board.FRAMEWORKS[r.row.framework_family].stage
        jobs.append([r.query, profile, stage])
    return run_at(rev, OLD_RUNNER, jobs)


def line(name: str, s: dict) -> str:
    if not s["rows"] and not s["calls"]:
        return f"| {name} | 0 | | | | |"
    med = "" if s["median_abs"] is None else f"{s['median_abs']:.1%}"
    top = "" if s["max_abs"] is None else f"{s['max_abs']:.1%}"
    return (
        f"| {name} | {s['rows']} | {med} | {top} | {s['within_10pct']} "
        f"| {s['calls_correct']}/{s['calls']} ({s['ooms_called']}/{s['ooms']} OOMs) |"
    )


def _old_results(results, old) -> list[board.MemoryRowResult]:
    """The previous model's figures in the board's own records, so one summary serves both."""
    from dataclasses import replace

    out = []
    for r, o in zip(results, old, strict=True):
        if o is None:
            out.append(replace(r, reason="refused by the previous model"))
            continue
        total, fits = o
        out.append(replace(r, predicted_gib=total / GIB if r.figure else None,
                           peak_gib=total / GIB, predicted_fits=fits))  # fmt: skip
    return out


def memory_report(rev: str, show_rows: bool) -> None:
    every = board.rows()
    results = [r for r in every if not r.reason]
    models = {"this model": results}
    try:
        models[f"previous model ({rev})"] = _old_results(
            results, previous_predictions(rev, results)
        )
    except subprocess.CalledProcessError as exc:
        print(f"(previous model at {rev} did not run: {exc.stderr.strip()[-200:]})")
    print("\n## Memory: predicted peak per GPU against the published figure\n")
    head = "| rows | median abs error | max abs error | within 10% | fit/OOM calls correct |"
    print(f"| model {head}\n|---|---|---|---|---|---|")
    for name, rs in models.items():
        print(line(name, board.summary(rs)))
    print(f"\n| source | model {head}\n|---|---|---|---|---|---|---|")
    for name, rs in models.items():
        fam: dict[str, list] = defaultdict(list)
        for r in rs:
            fam[board.family(r)].append(r)
        for src, group in sorted(fam.items()):
            print(f"| {src} " + line(name, board.summary(group)))
    s = board.summary(results)
    ok = board.meets_targets(s)
    t = board.TARGETS
    print(
        f"\nTargets: median |error| <= {t['median_abs']:.0%}: {s['median_abs']:.1%} "
        f"({'met' if ok['median_abs'] else 'NOT met'}); max |error| <= {t['max_abs']:.0%}: "
        f"{s['max_abs']:.1%} ({'met' if ok['max_abs'] else 'NOT met'}); every published OOM "
        f"called: {s['ooms_called']}/{s['ooms']} ({'met' if ok['ooms'] else 'NOT met'}); every "
        f"run that ran predicted to fit: {s['calls_correct'] - s['ooms_called']}/"
        f"{s['calls'] - s['ooms']}"
    )
    compiled = [r for r in board.compiled_rows() if not r.reason]
    title = "this model, compiled rows as eager"
    was = _old_results(compiled, previous_predictions(rev, compiled)) if len(models) > 1 else []
    print(
        "\nNot in the tables above: the torch.compile rows, predicted as if eager (compile is"
        " not modelled):\n\n| model "
        + head
        + "\n|---|---|---|---|---|---|\n"
        + line(title, board.summary(compiled))
        + ("\n" + line(f"previous model ({rev})", board.summary(was)) if was else "")
    )
    for r, o in zip(compiled, was or [None] * len(compiled), strict=True):
        prev = "" if o is None or o.error is None else f", previous {o.error:+.1%}"
        print(f"  {r.row.id[:52]:52} {r.figure} {r.measured_gib:6.2f} -> "
              f"{r.predicted_gib:6.2f} ({r.error:+.1%}{prev})")  # fmt: skip
    left = [r for r in every if r.reason]
    print(f"\n{len(results)} rows predicted; {len(left)} left out:")
    for reason in sorted({r.reason for r in left}):
        print(f"- {reason}: {sum(r.reason == reason for r in left)}")
    if show_rows:
        old = dict(zip([id(r) for r in results], models.get(f"previous model ({rev})", []),
                       strict=False))  # fmt: skip
        print()
        for r in results:
            prev = old.get(id(r))
            was = "" if prev is None or prev.peak_gib is None else f" old {prev.peak_gib:6.2f}"
            fig = f"{r.figure:10} {r.measured_gib:6.2f} -> {r.predicted_gib:6.2f} " \
                  f"({r.error:+.1%})" if r.figure else f"{'outcome':10} {'oom':>6}" \
                  f" -> peak {r.peak_gib:6.2f}"  # fmt: skip
            call = "ok" if r.call_correct else "MISCALLED"
            print(f"{r.row.id[:50]:50} {fig} cap {r.capacity_gib:5.1f} {call}{was}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--previous", default=None, help="git revision of the previous model")
    ap.add_argument("--rows", action="store_true")
    args = ap.parse_args()
    memory_report(args.previous or previous_rev(), args.rows)
