"""A validated scenario as something to run: Megatron-LM flags, a torchtitan TOML, or torch's
pipeline action CSV. Each names the framework release whose spelling it uses
(result.Framework), and refuses (Export.code/reason) what that framework cannot run instead of
emitting flags that would run something else. A stage above evaluate: it validates a
scenario with evaluate's own checks (one_scenario.check, specs.check_model)."""

from __future__ import annotations

from app.core.evaluate.one_scenario import check
from app.core.export import megatron, torch_csv, torchtitan
from app.core.export.result import MEGATRON, TORCH, TORCHTITAN, Cannot, Export, Framework
from app.core.inputs.presets import HARDWARE
from app.core.inputs.scenario import Scenario
from app.core.inputs.specs import check_fp8, check_model, model_of
from app.core.schedules.pipeline import plan

FORMATS = ("megatron", "torchtitan", "torch-csv")
FRAMEWORK = {"megatron": MEGATRON, "torchtitan": TORCHTITAN, "torch-csv": TORCH}


def export(fmt: str, s: Scenario) -> Export:
    """``s`` in format ``fmt`` (one of FORMATS). Raises ScenarioError, naming the field, for a
    scenario the views would refuse; a framework's refusal is the Export's ``code``."""
    fw = FRAMEWORK[fmt]
    check(s)  # the cross-field rules every view applies (schedule sizes, stage_layers, ...)
    check_model(s, model_of(s))
    if s.hardware in HARDWARE:  # a preset: its FP8 support is known here (loaded profiles
        check_fp8(s, HARDWARE[s.hardware])  # are checked where the views resolve them)
    try:
        text, notes = _make(fmt, s, fw)
    except Cannot as why:
        return Export(fmt, fw, code=why.code, reason=why.reason, params=why.params)
    return Export(fmt, fw, text=text, notes=tuple(notes))


def _make(fmt: str, s: Scenario, fw: Framework) -> tuple[str, list[str]]:
    if fmt == "torch-csv":
        return torch_csv.render(torch_csv.rows(s.schedule, s.pp, s.microbatches,
                                               s.virtual_stages)), []  # fmt: skip
    m = model_of(s)
    p = plan(s.schedule, s.pp, s.virtual_stages, m.layers, s.layer_split)
    head = f"# {fw.cite}\n# meshscope: {_share(s)}\n"
    if fmt == "megatron":
        flags, notes = megatron.flags(s, m, p)
        return head + f"# launch on {s.world_size} GPUs (data parallel = {s.dp})\n" + \
            megatron.render(flags) + "\n", notes  # fmt: skip
    tables, notes = torchtitan.tables(s, m, p)
    return head + torchtitan.render(tables), notes


def _share(s: Scenario) -> str:
    """The scenario's own query: what the export was made from."""
    q = s.query()
    return "&".join(f"{k}={v}" for k, v in q.items()) or "(defaults)"


__all__ = ["FORMATS", "Export", "Framework", "export"]
