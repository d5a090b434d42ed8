"""The guided path's widgets (/learn), each from the same evaluate() the views draw.

A step (app/core/teach/learn.py) names its scenarios; this module evaluates them and keeps
what the step's small widget draws: the per-GPU memory of the peak stage split into the
article's four parts (weights, gradients, optimizer state, activations), the step's time
split, the pipeline timeline, or the rank layout. Nothing here is a second cost model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.core.evaluate.one_scenario import evaluate
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.scenario import Scenario
from app.core.teach.learn import Step, Variant
from app.core.views.formula_bubble import closed_bubble

# The cost model's memory terms (app/core/cost/memory.py) in the article's four groups;
# the rest of total_bytes (allocator floor, fragmentation) is "other".
MEMORY_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("weights", ("weights_bytes", "gather_bytes")),
    ("grads", ("grads_bytes", "grad_accum_bytes", "root_grads_bytes")),
    ("optimizer", ("optimizer_bytes",)),
    ("activations", ("activations_bytes", "logits_transient_bytes", "recompute_transient_bytes")),
)
Evaluator = Callable[[Scenario], dict[str, Any]]


def memory_parts(stage: Mapping[str, Any]) -> dict[str, float]:
    """One stage's bytes per group; the groups sum to its total_bytes."""
    out = {name: float(sum(stage.get(k, 0.0) for k in keys)) for name, keys in MEMORY_GROUPS}
    out["other"] = max(0.0, float(stage["total_bytes"]) - sum(out.values()))
    return out


def time_parts(view: Mapping[str, Any]) -> dict[str, float]:
    """The step's seconds: the pipeline's busy compute, the TP all-reduces inside it, its
    bubble, then the exposed DP sync and the optimizer step (prediction.sections' breakdown;
    step_time_s = pipeline + dp + optimizer, app/core/cost/step.py)."""
    b = view["breakdown"]
    compute = max(0.0, b["pipeline_s"] - b["bubble_s"] - b["tp_s"])
    out = {"compute": compute, "tp": b["tp_s"], "bubble": b["bubble_s"], "dp": b["dp_s"],
           "optimizer": b["optimizer_s"]}  # fmt: skip
    out["other"] = max(0.0, view["step_time_s"] - sum(out.values()))
    return out


def variant_json(v: Variant, view: Mapping[str, Any]) -> dict[str, Any]:
    """What a bar shows of one evaluated scenario, with the query that reproduces it."""
    mem = view["memory"]
    peak = mem["per_stage"][mem["peak_stage"]]
    return {
        "label": v.label,
        "query": view["query"],
        "memory": memory_parts(peak),
        "peak_bytes": mem["peak_bytes"],
        "fits": mem["fits"],
        "time": time_parts(view),
        # TP's all-reduces over the whole step: the article's "above 30%, reduce TP" ratio.
        "tp_share": view["breakdown"]["tp_s"] / view["step_time_s"],
        "step_time_s": view["step_time_s"],
        "tokens_per_s": view["tokens_per_s"],
        "mfu": view["mfu"],
        "world_size": view["layout"]["world_size"],
    }


def _bubble(s: Scenario, view: Mapping[str, Any]) -> dict[str, Any]:
    """The drawn timeline's bubble beside the article's closed form, as the bubble card
    prices it (formula_bubble.closed_bubble: (p-1)/(m+p-1) for this step's 1F1B)."""
    return {"p": s.pp, "m": s.microbatches, "formula": closed_bubble(s),
            "simulated": view["timeline"]["bubble_fraction"]}  # fmt: skip


def widget(step: Step, run: Evaluator) -> dict[str, Any]:
    """The step's widget data; ``run`` is the app's evaluator (its cache) or evaluate."""
    scenarios = [Scenario.model_validate(v.pairs()) for v in step.variants]
    views = [run(s) for s in scenarios]
    if step.widget in ("memory", "time"):
        variants = [variant_json(v, view) for v, view in zip(step.variants, views, strict=True)]
        capacity = views[0]["memory"]["capacity_bytes"]
        return {"kind": step.widget, "note": step.note, "capacity_bytes": capacity,
                "variants": variants}  # fmt: skip
    view = views[0]
    base = {"kind": step.widget, "label": step.variants[0].label, "query": view["query"]}
    if step.widget == "timeline":
        keep = ("timeline", "schedule", "layout", "memory")
        return {**base, "view": {k: view[k] for k in keep}, "bubble": _bubble(scenarios[0], view)}
    return {**base, "layout": view["layout"], "variant": variant_json(step.variants[0], view)}


def default_run(hardware: Mapping[str, HardwareSpec] = HARDWARE) -> Evaluator:
    return lambda s: evaluate(s, hardware)
