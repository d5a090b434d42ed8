"""The accuracy board: the published runs as records with their summaries, and the model's
error band for a kind of configuration, the one every page shows beside a predicted step time.

A kind is what moves the error most across the validation set (app/core/fidelity/board.py): the
hardware generation (one set of cost-model constants each), which parallel axes are in use
(TP > 1, PP > 1, DP > 1) and whether data parallelism shards the model (ZeRO-3 / FSDP, the
rows the model is furthest from). A band is the median and max |error| of the predicted rows
of the scenario's kind; with fewer than ``MIN_ROWS`` of them, of its whole generation, then of
every row. Hardware of a generation with no predicted row is not validated, and says so.

Pure: the rows come in as an argument, so the web layer computes them once per app.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.core.fidelity.board import BASELINE_MFU, HARDWARE_ALIASES, Row, source_family, summary
from app.core.inputs.hardware import AMPERE, HARDWARE, HOPPER
from app.core.inputs.scenario import Scenario

# The generations the cost model has constants for, by the constants themselves: a preset
# added with AMPERE's or HOPPER's efficiency is that generation without another table.
GENERATIONS = {"ampere": AMPERE, "hopper": HOPPER}
MIN_ROWS = 3  # fewer rows than this say too little about a kind: fall back to a wider set
# Overrides that change the time a scenario takes: its hardware is no longer the preset's.
SPEED_OVERRIDES = ("peak_tflops", "intra_gbps", "inter_gbps")
# The core's reasons for leaving a row out, as codes the page translates (prefix match).
REASON_CODES = {
    "FP8 is not modelled": "fp8",
    "context parallelism is not modelled": "cp",
    "no hardware profile for": "no_profile",
    "interleave depth not published": "no_vpp",
    "global batch not published": "no_batch",
    "not expressible": "not_expressible",
}


@dataclass(frozen=True)
class Kind:
    generation: str | None  # None: hardware the cost model has no fitted constants for
    tp: bool
    pp: bool
    dp: bool
    zero3: bool


def generation(hardware: str) -> str | None:
    """The generation whose constants a hardware preset uses, or None."""
    spec = HARDWARE.get(HARDWARE_ALIASES.get(hardware, hardware))
    if spec is None:
        return None
    return next((g for g, eff in GENERATIONS.items() if spec.efficiency == eff), None)


def row_kind(row: Row) -> Kind:
    r = row.run
    sharded = r.zero in ("fsdp", "zero-3")
    return Kind(generation(r.hardware), r.tp > 1, r.pp > 1, r.dp > 1, sharded)


def scenario_kind(s: Scenario) -> Kind:
    return Kind(generation(s.hardware), s.tp > 1, s.pp > 1, s.dp > 1, s.zero == 3)


def band(rows: Sequence[Row], kind: Kind) -> dict[str, Any] | None:
    """The error band of the rows like ``kind``, widening while too few; None when the kind's
    generation has no predicted row at all."""
    predicted = [r for r in rows if not r.reason]
    same_gen = [r for r in predicted if row_kind(r).generation == kind.generation]
    if kind.generation is None or not same_gen:
        return None
    like = [r for r in same_gen if row_kind(r) == kind]
    level, chosen = next(
        (lv, rs) for lv, rs in (("kind", like), ("generation", same_gen), ("all", predicted))
        if len(rs) >= MIN_ROWS or lv == "all"
    )  # fmt: skip
    return {
        "level": level,
        "kind": asdict(kind),
        **summary([r.error for r in chosen]),
        "hardware": sorted({r.hardware for r in chosen}),
    }


def band_for(rows: Sequence[Row], s: Scenario) -> dict[str, Any]:
    """What a page shows beside the scenario's step time: the band, or why there is none."""
    if any(getattr(s, f) is not None for f in SPEED_OVERRIDES):
        return {"validated": False, "reason": "overrides", "hardware": s.hardware}
    found = band(rows, scenario_kind(s))
    if found is None:
        return {"validated": False, "reason": "hardware", "hardware": s.hardware}
    # A Hopper preset validated on H100 rows says so: the constants are shared, the chip is not.
    return {"validated": True, **found, "same_hardware": s.hardware in found["hardware"]}


def reason_code(reason: str) -> str:
    return next((c for text, c in REASON_CODES.items() if reason.startswith(text)), "other")


def record(row: Row) -> dict[str, Any]:
    """One row as the board's JSON: the source, its configuration, both times or the reason."""
    r, a = row.run, row.run.arch
    shape = {k: getattr(a, k) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden")}
    shape.update(vocab=a.vocab, seq_len=a.seq_len, gated_mlp=a.gated_mlp)
    return {
        "source": r.source, "url": r.url, "family": source_family(r), "model": a.name,
        "shape": shape, "hardware": r.hardware, "profile": row.hardware or None,
        "gpus": r.gpus, "gpus_per_node": r.gpus_per_node, "tp": r.tp, "pp": r.pp, "dp": r.dp,
        "cp": r.cp, "schedule": r.schedule, "vpp": r.vpp, "micro_batch": r.micro_batch,
        "global_batch": r.global_batch, "recompute": r.recompute, "precision": r.precision,
        "zero": r.zero, "published_s": row.published_s, "predicted_s": row.predicted_s,
        "baseline_s": row.baseline_s, "error": row.error, "baseline_error": row.baseline_error,
        "reason": row.reason, "reason_code": reason_code(row.reason) if row.reason else None,
        "query": row.query, "kind": asdict(row_kind(row)), "verified": r.verified,
    }  # fmt: skip


def _both(rows: Sequence[Row]) -> dict[str, Any]:
    return {
        "model": summary([r.error for r in rows]),
        "baseline": summary([r.baseline_error for r in rows]),
    }


def kinds(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Every kind the predicted rows cover, with the band a scenario of that kind is shown."""
    seen = sorted({row_kind(r) for r in rows if not r.reason}, key=lambda k: str(asdict(k)))
    return [band(rows, k) | {"kind": asdict(k)} for k in seen]


def report(rows: Sequence[Row]) -> dict[str, Any]:
    """The board: every row, the summary of the model and of the flat baseline overall and per
    source family, the bands by kind, and how many rows each reason leaves out."""
    predicted = [r for r in rows if not r.reason]
    families: dict[str, list[Row]] = defaultdict(list)
    for r in predicted:
        families[source_family(r.run)].append(r)
    reasons: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.reason:
            reasons[r.reason] += 1
    return {
        "runs": len(rows),
        "predicted": len(predicted),
        "baseline_mfu": BASELINE_MFU,
        "min_band_rows": MIN_ROWS,
        "summary": _both(predicted),
        "sources": [{"family": f, **_both(rs)} for f, rs in sorted(families.items())],
        "kinds": kinds(rows),
        "left_out": [
            {"reason": k, "reason_code": reason_code(k), "rows": n}
            for k, n in sorted(reasons.items())
        ],
        "rows": [record(r) for r in rows],
    }
