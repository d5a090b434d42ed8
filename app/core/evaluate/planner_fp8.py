"""FP8 as a searched axis (issue 27, the plan's fp8=search): the planner tries the FP8 recipes
the hardware runs beside 16-bit training and says which it chose and what bf16 would take.

Recipes tried: tensorwise wherever there are FP8 tensor cores (Hopper, Ada, Blackwell,
MI300: specs.check_fp8), and MXFP8 too where the hardware scales MX blocks (Blackwell). On
hardware without FP8 the search is bf16 alone, and the answer says so: fp8=search asks for
the best numerics the hardware allows, while an explicit recipe on such hardware stays a
422 naming fp8 (app/api/plan.py). Blockwise is not tried: it runs the same FP8 GEMMs as
tensorwise and casts with more scale bytes (cost/fp8.py SCALE_BYTES), so the cost model never
prices it faster; a user who wants its numerics names it.

Only the FP8_TRIED fastest bf16 candidates that fit are priced in FP8 (the closed-form pass):
FP8 only adds memory (its weight copies, cost/fp8.py), so a candidate that does not fit in
bf16 does not fit in FP8, and it speeds the GEMMs every candidate runs, so the fastest in FP8
come from the fastest in bf16 (a heuristic; tests/core/test_planner_fp8.py checks a case
against pricing every candidate). This keeps the pass within issue 27's time budget.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import Candidate
from app.core.inputs.presets import HardwareSpec

SEARCH = "search"
# bf16 candidates whose FP8 variants are priced (four times the planner's shortlist).
FP8_TRIED = 96

Ranked = list[tuple[float, float, Candidate]]  # (closed-form tokens/s, peak bytes, candidate)


def recipes(hw: HardwareSpec) -> tuple[str, ...]:
    """The FP8 recipes fp8=search tries on ``hw`` (the module's note); () without FP8."""
    if not hw.fp8_tflops:
        return ()
    return ("tensorwise", "mxfp8") if hw.mxfp8 else ("tensorwise",)


def variants(closed: Pass, fitting: Ranked, tried: tuple[str, ...]) -> Ranked:
    """The FP8 variants, at every recipe of ``tried``, of the first FP8_TRIED of ``fitting``
    (bf16 candidates that fit, ranked), those that still fit."""
    pool = [replace(c, fp8=r) for _, _, c in fitting[:FP8_TRIED] for r in tried]
    peaks = closed.peaks(pool)
    return [
        (closed.tokens_per_s(c), p, c)
        for c, p in zip(pool, peaks, strict=True)
        if p <= closed.capacity
    ]  # fmt: skip


def summary(
    tried: tuple[str, ...], hardware: str, best: dict[str, Any] | None, bf16: dict | None
) -> dict[str, Any]:
    """What the answer says of the search: the recipes tried (bf16 first), the first row's,
    and the fastest bf16 row simulated (its tokens/s, MFU against the bf16 peak as every
    row's, step time and link) with the first row's speed over it."""
    out: dict[str, Any] = {
        "searched": ["none", *tried],
        "chosen": None if best is None else best["scenario"]["fp8"],
        "hardware": hardware,
        "fp8_hardware": bool(tried),
    }
    if bf16 is not None:
        out["bf16"] = {k: bf16[k] for k in ("tokens_per_s", "mfu", "step_time_s", "query")}
        if best is not None:
            out["speedup"] = best["tokens_per_s"] / bf16["tokens_per_s"]
    return out
