"""The accuracy board's mixture-of-experts rows (issue 27) and where their predicted time goes.

The rows are the board's own (app/core/fidelity/published_runs.json, the runs whose arch
names a MoE preset): measured runs on DGX-H100 from NVIDIA's Megatron-Bridge performance
summary (github.com/NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, the
25.09 to 26.06 containers), priced by app/core/fidelity/board.py with the shipped H100
constants; nothing is fitted to them (fit.fits_on). Qwen3-235B-A22B's rows run TP 2 with
EP 32 over TP x DP (expert TP 1, MoE parallel folding), expressible since the etp knob.

The second table splits one layer's forward + backward (F + B + W) of each configuration
into the cost model's terms, so what the model charges can be read beside the gap to the
measured time. Not a test.

    python bench/fidelity_moe.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.cost import comm, compute, durations, fp8, shapes  # noqa: E402
from app.core.evaluate import prepare  # noqa: E402
from app.core.fidelity import board  # noqa: E402
from app.core.fidelity.published_runs import RUNS  # noqa: E402
from app.core.inputs import specs  # noqa: E402


def rows() -> list[board.Row]:
    return [board.row(r) for r in RUNS if r.moe]


def table(got: list[board.Row]) -> None:
    print("| id | parallelism | published tok/s/GPU | predicted | step error |")
    print("|---|---|---|---|---|")
    for r in got:
        run = r.run
        axes = f"tp{run.tp} pp{run.pp} dp{run.dp} ep{run.ep}" + (
            f" etp{run.etp}" if run.etp else ""
        )
        predicted = run.tokens_per_s_per_gpu * r.published_s / r.predicted_s
        print(f"| {run.id} | {axes} | {run.tokens_per_s_per_gpu:g} | {predicted:.0f} | "
              f"{r.error:+.1%} |")  # fmt: skip
    mags = [abs(r.error) for r in got]
    print(f"\n{len(got)} rows: median |error| {statistics.median(mags):.1%}, max {max(mags):.1%};"
          f" predicted faster than published: {sum(r.error < 0 for r in got)}")  # fmt: skip


def terms(r: board.Row) -> dict[str, float]:
    """One layer's F + B + W seconds on one rank, by term (durations.layer_cost's parts)."""
    s = board.scenario_of(r.run)
    layout, _, cost = prepare(s)
    m, hw, t = specs.model_of(s), specs.hardware_of(s), cost.training
    m = shapes.as_held(m, s.tp, t.vocab_multiple, s.ep, s.routing_imbalance)
    gemm, cast_f, cast_b = fp8.layer_seconds(m, hw, t, s.tp)
    attn_f, attn_b = compute.attention_seconds(m, hw, t, s.tp)
    lc = durations.layer_cost(m, hw, t, layout)
    share = m.moe_layers / m.layers
    return {
        "GEMMs (FP8 where it gains)": 3 * gemm,
        "FP8 casts": cast_f + cast_b,
        "attention": attn_f + attn_b,
        "elementwise": 3 * compute.hbm_seconds(compute.elementwise_bytes(m, t, s.tp), hw),
        "token shuffles": 2 * compute.hbm_seconds(compute.moe_permute_bytes(m, t, s.tp), hw),
        "EP all-to-all": 2 * comm.moe_a2a_s(m, hw, t, layout) * share,
        "TP collectives": 2 * lc.tp,
        "layer F+B+W": lc.f + lc.b + lc.w + 2 * lc.tp,
    }


def breakdown(got: list[board.Row]) -> None:
    seen: dict[str, board.Row] = {}
    for r in got:
        seen.setdefault(str(sorted(r.query.items())), r)
    picked = list(seen.values())
    print("\n| term (ms per layer, F+B+W) | " + " | ".join(r.run.id for r in picked) + " |")
    print("|---|" + "---|" * len(picked))
    cols = [terms(r) for r in picked]
    for name in cols[0]:
        print(f"| {name} | " + " | ".join(f"{c[name] * 1e3:.2f}" for c in cols) + " |")
    gap = [r.published_s / r.predicted_s for r in picked]
    print("| measured / predicted step | " + " | ".join(f"{g:.2f}x" for g in gap) + " |")


def main() -> None:
    got = rows()
    print("source: NVIDIA Megatron-Bridge performance-summary-archive.md, DGX-H100\n")
    table(got)
    breakdown(got)


if __name__ == "__main__":
    main()
