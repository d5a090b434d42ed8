"""The cost model's a-priori prediction for a measured run: the run's own configuration
(mesh, schedule, microbatches, the probe's GPT shape, dtype) through
``app.core.evaluate.evaluate`` on a hardware entry of the server's registry, with no
measured number going in. The replay (app.core.fidelity.measured.predict) is the other
thing the run page sets beside the measurement: a simulation fed with this run's own F/B/W,
which matches the measured pipeline by construction. Only this one tests the model.

Which hardware: a run declares no hardware profile, only its device and, on a known GPU (or
with ``--peak-tflops``), its dense peak at the run's dtype. So:

* ``declared_peak``: the entry (preset or loaded profile) whose GEMM peak at the run's dtype
  is nearest the declared one (by ratio);
* ``only_profile``: no peak declared and the server loaded exactly one profile (``meshscope
  serve --hardware-profile``, e.g. this box calibrated): that one;
* ``default``: otherwise the scenario's default preset; the page says this is not the run's
  machine;
* ``scenario_link``: an imported run laid out by a scenario link (RunInfo.scenario) is priced
  as that link's model on that link's hardware, with the run's own mesh: a trace says
  neither, and the probe's GPT shape would not be this run's model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.core.evaluate import evaluate
from app.core.inputs.hardware import HARDWARE, HardwareSpec
from app.core.inputs.protocol import RunInfo
from app.core.inputs.scenario import Scenario, ScenarioError

DEFAULT = Scenario.model_fields["hardware"].default


def hardware_for(info: RunInfo, registry: Mapping[str, HardwareSpec]) -> tuple[str, str]:
    """(entry name, basis): see the module docstring."""
    element = 4 if info.dtype == "fp32" else 2
    if info.peak_tflops:
        peak = info.peak_tflops
        name = min(
            registry,
            key=lambda k: (abs(math.log(registry[k].matmul_tflops(element) / peak)), k),
        )
        return name, "declared_peak"
    loaded = [k for k in registry if k not in HARDWARE]
    if len(loaded) == 1:
        return loaded[0], "only_profile"
    return DEFAULT, "default"


def linked_scenario(info: RunInfo, registry: Mapping[str, HardwareSpec]) -> Scenario:
    """An imported run's scenario link (RunInfo.scenario) with the run's own mesh, schedule
    and micro-batches: the link's model, training settings and hardware, which a trace does
    not say. A hardware entry this server does not have falls back as a probe's run does."""
    fields = {**info.scenario, "dp": info.dp, "tp": info.tp, "pp": info.pp, "order": info.order,
              "gpus_per_node": info.gpus_per_node, "schedule": info.schedule,
              "microbatches": info.microbatches, "virtual_stages": info.virtual_stages}  # fmt: skip
    if fields.get("hardware", DEFAULT) not in registry:
        fields["hardware"] = hardware_for(info, registry)[0]
    return Scenario.model_validate(fields)


def scenario_of(info: RunInfo, hardware: str) -> Scenario:
    """The probe's run as a scenario: its GPT blocks (GELU MLP of 4h, learned positions, an
    untied head, no recompute; TP by all-reduce without sequence parallelism, whole
    activations between stages), its mesh, schedule, batch and dtype. An imported run's cp
    is part of its mesh; its ep is not priced (the nominal model has no experts to place)."""
    m = info.model
    return Scenario(
        dp=info.dp, tp=info.tp, pp=info.pp, cp=info.cp, order=info.order,
        gpus_per_node=info.gpus_per_node,
        schedule=info.schedule, microbatches=info.microbatches,
        virtual_stages=info.virtual_stages, model="custom", layers=m.layers, hidden=m.hidden,
        heads=m.heads, vocab=m.vocab, seq_len=m.seq_len, micro_batch_size=m.microbatch_size,
        gated_mlp=False, tied_embeddings=False, learned_positions=True, recompute="none",
        sequence_parallel=False, pp_scatter_gather=False, dtype=info.dtype, hardware=hardware,
    )  # fmt: skip


# Per stage, the memory figures the run page sets beside the measured peaks (run_memory).
MEMORY = ("allocated_bytes", "reserved_bytes", "total_bytes")


def predict(info: RunInfo, registry: Mapping[str, HardwareSpec]) -> dict[str, Any]:
    """The prediction the run page shows beside measured and replay, and what it rests on.
    A configuration the cost model refuses gives ``error`` instead of numbers."""
    name, basis = hardware_for(info, registry)
    out: dict[str, Any] = {"hardware": name, "basis": basis, "declared_peak_tflops":
                           info.peak_tflops, "device": info.device}  # fmt: skip
    try:
        if info.scenario is not None:
            s = linked_scenario(info, registry)
            out |= {"hardware": s.hardware, "basis": "scenario_link"}
        else:
            s = scenario_of(info, name)
        view = evaluate(s, registry)
    except (ScenarioError, ValidationError, ValueError) as err:
        return out | {"error": str(err)[:300]}
    b, mem = view["breakdown"], view["memory"]
    stages = [{k: st[k] for k in ("stage", *MEMORY)} for st in mem["per_stage"]]
    return out | {
        "step_time_s": view["step_time_s"],
        "pipeline_s": b["pipeline_s"],
        "tp_s": b["tp_s"],
        "dp_s": b["dp_s"],
        "optimizer_s": b["optimizer_s"],
        "bubble_s": b["bubble_s"],
        "query": s.query(),  # the overview's link for the same scenario
        "memory": {"capacity_bytes": mem["capacity_bytes"], "per_stage": stages},
    }
