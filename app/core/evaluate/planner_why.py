"""Why a planner row wins or loses, as numbers a page can word in any language, and the
frameworks that refuse its combination."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.core.evaluate import planner_hsdp as hsdp
from app.core.evaluate.planner_pass import Pass
from app.core.evaluate.planner_search import Candidate


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


def why_of(
    view: dict[str, Any], best: float, rank: int, trust: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Why a row wins or loses, as numbers a page can word in any language. ``trust``: the
    row's memory margin and what the published runs say of it (planner._row)."""
    br, step, mem = view["breakdown"], view["step_time_s"], view["memory"]
    of_best = view["tokens_per_s"] / best
    trust = trust or {}
    lead = "fastest" if rank == 0 else "of_best"
    if rank > 0 and of_best > 1.0 and trust.get("tight"):
        lead = "tight_faster"  # faster than the first row, but not by more than the band
    return {
        "lead": lead if mem["fits"] else "misfit",
        "of_best": of_best,
        "bubble": view["bubble_fraction"],
        "tp_share": br["tp_s"] / step,
        "dp_share": br["dp_s"] / step,
        "memory": mem["peak_bytes"] / mem["capacity_bytes"],
        "notes": framework_notes(view["scenario"]["zero"], view["scenario"]["pp"]),
        "schedule": view["scenario"]["schedule"],
        "mfu": view["mfu"],
        **trust,
    }


LEAD_TEXT = {
    "fastest": "fastest that fits",
    "misfit": "does not fit in memory",
    "tight_faster": "{x:.0%} of the first row's speed, ranked below it for memory headroom",
}
BEYOND_TEXT = {
    "hardware": "no validated published run on this hardware",
    "schedule": "no validated published run uses {schedule}",
    "kind": "no validated published run of this kind (parallel axes, ZeRO-3) on this GPU",
    "mfu": "MFU {mfu:.0%} is above the highest published on this GPU generation ({ceiling:.0%})",
    "knob": "no validated published run has {knob} on",  # any other code names a knob
}


def trust_notes(why: dict[str, Any]) -> list[str]:
    """The English notes of a row's memory margin and of its extrapolation."""
    notes = []
    if why.get("tight"):
        notes.append(
            f"tight: {why['margin_bytes'] / (1 << 30):.1f} GiB ({why['margin']:.1%}) of HBM "
            f"free, under the {why['headroom']:.0%} headroom"
        )
    if why.get("extrapolated"):
        words = {"schedule": why.get("schedule"), "mfu": why.get("mfu", 0.0),
                 "ceiling": why.get("mfu_ceiling") or 0.0}  # fmt: skip
        said = [
            BEYOND_TEXT.get(code, BEYOND_TEXT["knob"]).format(**words, knob=code)
            for code in why["extrapolated"]
        ]
        notes.append("extrapolated: " + ", ".join(said))
    return notes


def reason_text(why: dict[str, Any]) -> str:
    """The English sentence of a row's why."""
    lead = LEAD_TEXT.get(why["lead"], "{x:.0%} of the best").format(x=why["of_best"])
    text = (
        f"{lead}: bubble {why['bubble']:.0%}, TP comm {why['tp_share']:.0%}, "
        f"DP all-reduce {why['dp_share']:.0%}, memory {why['memory']:.0%} of HBM"
    )
    notes = [NOTE_TEXT[n["code"]].format(**n) for n in why.get("notes", ())]
    return "; ".join([text, *axis_notes(why), *trust_notes(why), *notes])


AXIS_TEXT = {
    "hsdp": "HSDP dp_shard={dp_shard} ({replicas} replicas, shard groups {where}): {gain:+.0%} "
    "tokens/s over plain FSDP on this mesh",
    "fp8": "FP8 {recipe}: {gain:+.0%} tokens/s over this row in bf16",
}
WHERE_TEXT = {True: "inside one NVLink domain", False: "across nodes"}


def axis_notes(why: dict[str, Any]) -> list[str]:
    """The English notes of a row's HSDP shard group and FP8 recipe (axes_of): what
    each gains over the same row without it."""
    out = []
    if "hsdp" in why:
        h = why["hsdp"]
        out.append(AXIS_TEXT["hsdp"].format(**{**h, "where": WHERE_TEXT[h["inside"]],
                                               "gain": h["gain"] - 1.0}))  # fmt: skip
    if "fp8" in why:
        f = why["fp8"]
        out.append(AXIS_TEXT["fp8"].format(recipe=f["recipe"], gain=f["gain"] - 1.0))
    return out


def axes_of(closed: Pass, c: Candidate) -> dict[str, Any]:
    """Why a row runs HSDP or FP8, for its why: the shard group (inside one NVLink domain or
    across) and the row's closed-form speed over the same row as plain FSDP, and over the
    same row in bf16 (the closed-form pass prices both alike; both fit wherever the row
    does, since HSDP and FP8 only add memory). Empty for a row with neither."""
    out: dict[str, Any] = {}
    if c.dp_shard is not None:
        fsdp = replace(c, dp_shard=None)
        out["hsdp"] = {"dp_shard": c.dp_shard, "replicas": c.dp // c.dp_shard,
                       "inside": hsdp.inside(closed, (c.dp, c.tp, c.pp, c.cp, c.ep), c.dp_shard),
                       "gain": closed.tokens_per_s(c) / closed.tokens_per_s(fsdp)}  # fmt: skip
    if c.fp8 != "none":
        bf16 = replace(c, fp8="none")
        out["fp8"] = {"recipe": c.fp8, "gain": closed.tokens_per_s(c) / closed.tokens_per_s(bf16)}
    return out
