"""Why a planner row wins or loses, as numbers a page can word in any language, and the
frameworks that refuse its combination."""

from __future__ import annotations

from typing import Any


def framework_notes(zero: int, pp: int) -> list[dict[str, Any]]:
    """Frameworks that refuse a row's combination, as data a page can word in any language.

    DeepSpeed's PipelineEngine asserts ZeRO stage < 2 (deepspeed/runtime/pipe/engine.py:
    "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"); Megatron-LM's
    distributed optimizer and torchtitan's FSDP2 + PP shard optimizer, gradients (and, in
    torchtitan, parameters: ZeRO-3-like) across DP alongside pipelines.
    """
    if zero >= 2 and pp > 1:
        return [{"code": "deepspeed_refuses_zero_pp", "framework": "deepspeed", "zero": zero,
                 "pp": pp, "allowed_by": ["megatron", "torchtitan"]}]  # fmt: skip
    return []


NOTE_TEXT = {
    "deepspeed_refuses_zero_pp": "DeepSpeed refuses ZeRO-{zero} with pipeline parallelism "
    "(Megatron-LM and torchtitan's FSDP + PP allow ZeRO-3-like sharding)",
}


def why_of(view: dict[str, Any], best: float, rank: int) -> dict[str, Any]:
    """Why a row wins or loses, as numbers a page can word in any language."""
    br, step, mem = view["breakdown"], view["step_time_s"], view["memory"]
    lead = "fastest" if rank == 0 else "of_best"
    return {
        "lead": lead if mem["fits"] else "misfit",
        "of_best": view["tokens_per_s"] / best,
        "bubble": view["bubble_fraction"],
        "tp_share": br["tp_s"] / step,
        "dp_share": br["dp_s"] / step,
        "memory": mem["peak_bytes"] / mem["capacity_bytes"],
        "notes": framework_notes(view["scenario"]["zero"], view["scenario"]["pp"]),
    }


def reason_text(why: dict[str, Any]) -> str:
    """The English sentence of a row's why."""
    lead = {"fastest": "fastest that fits", "misfit": "does not fit in memory"}.get(
        why["lead"], f"{why['of_best']:.0%} of the best"
    )
    text = (
        f"{lead}: bubble {why['bubble']:.0%}, TP comm {why['tp_share']:.0%}, "
        f"DP all-reduce {why['dp_share']:.0%}, memory {why['memory']:.0%} of HBM"
    )
    notes = [NOTE_TEXT[n["code"]].format(**n) for n in why.get("notes", ())]
    return "; ".join([text, *notes])
