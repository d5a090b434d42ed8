"""The error band beside every predicted step time, drawn only from held-out rows of the
scenario's kind of configuration.

A row counts in a band with its *held-out* error (fit.py: its error when the GEMM ceiling is
fitted without its source), never the in-sample one the constants were chosen on. A kind
(kinds.kind_of: generation, schedule, axes above 1, ZeRO-3, SP) is *validated* when at least
``MIN_ROWS`` held-out rows are of it; its band is their median and max |error|, with how
many rows and from which sources. Any other kind is not validated, and its band names the
nearest validated kind (``nearest``: the fewest key fields different, then the most rows) and
that kind's held-out error, with the fields it differs in.

No band at all, whatever the kind: a forward-only schedule (naive: no measured training
step is like it), a scenario that does not fit in memory (nothing was measured that ran out
of it), hardware the cost model has no fitted constants for, or speed figures overridden.

Pure: the rows come in as an argument, so the web layer computes them once per app.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import astuple
from functools import lru_cache
from typing import Any

from app.core.fidelity.board import BASELINE_MFU, Row, scenario_of, source_family, summary
from app.core.fidelity.fit import GRID, LIMIT
from app.core.fidelity.kinds import GENERATIONS, ConfigKind, as_json, differences, kind_of
from app.core.fidelity.published_runs import PublishedRun
from app.core.inputs.scenario import Scenario
from app.core.schedules import FORWARD_ONLY

MIN_ROWS = 3  # fewer held-out rows than this say too little about a kind to validate it
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


@lru_cache(maxsize=1024)
def run_kind(run: PublishedRun) -> ConfigKind:
    """A published row's kind: the kind of the scenario it is predicted as."""
    return kind_of(scenario_of(run))


def held_out_rows(rows: Iterable[Row]) -> list[Row]:
    """The predicted rows that have a held-out error (fit.py); the only rows a band counts."""
    return [r for r in rows if not r.reason and r.held_out_error is not None]


def by_kind(rows: Iterable[Row]) -> dict[ConfigKind, list[Row]]:
    out: dict[ConfigKind, list[Row]] = defaultdict(list)
    for r in held_out_rows(rows):
        out[run_kind(r.run)].append(r)
    return out


def _stats(rows: Sequence[Row]) -> dict[str, Any]:
    """A kind's band: median and max held-out |error|, its rows (ids) and their sources."""
    return {
        **summary([r.held_out_error for r in rows]),
        "sources": sorted({source_family(r.run) for r in rows}),
        "ids": [r.run.id for r in rows],
        "hardware": sorted({r.hardware for r in rows}),
    }


def _order(k: ConfigKind) -> tuple:
    return tuple("" if v is None else str(v) for v in astuple(k))


def nearest(kind: ConfigKind, table: dict[ConfigKind, list[Row]]) -> dict[str, Any] | None:
    """The validated kind closest to ``kind``: one of its own population first (a mixture of
    experts or a dense model: their held-out errors differ by an order, bench/fidelity.py),
    then the fewest key fields different, the most rows, the most sources; None when no kind
    is validated."""
    valid = [k for k, rs in table.items() if len(rs) >= MIN_ROWS and k != kind]
    if not valid:
        return None

    def rank(k: ConfigKind) -> tuple:
        rs = table[k]
        n_src = len({source_family(r.run) for r in rs})
        return (k.moe != kind.moe, len(differences(kind, k)), -len(rs), -n_src, _order(k))

    k = min(valid, key=rank)
    return {"kind": as_json(k), "differs": differences(kind, k), **_stats(table[k])}


def band_for(rows: Sequence[Row], s: Scenario, fits: bool = True) -> dict[str, Any]:
    """What a page shows beside the scenario's step time: its kind's held-out band, the
    nearest validated kind's when its own is not validated, or why there is none."""
    if s.schedule in FORWARD_ONLY:
        return {"validated": False, "reason": "forward_only", "hardware": s.hardware}
    if not fits:
        return {"validated": False, "reason": "oom", "hardware": s.hardware}
    if any(getattr(s, f) is not None for f in SPEED_OVERRIDES):
        return {"validated": False, "reason": "overrides", "hardware": s.hardware}
    kind = kind_of(s)
    if kind.generation is None:
        return {"validated": False, "reason": "hardware", "hardware": s.hardware}
    table = by_kind(rows)
    mine = table.get(kind, [])
    stats = _stats(mine)
    if len(mine) >= MIN_ROWS:
        # Hopper presets share H100's constants: the band says which chip its rows ran on.
        return {"validated": True, "held_out": True, "kind": as_json(kind), **stats,
                "same_hardware": s.hardware in stats["hardware"], "nearest": None}  # fmt: skip
    return {"validated": False, "reason": "kind", "held_out": True, "kind": as_json(kind),
            **stats, "nearest": nearest(kind, table)}  # fmt: skip


def reason_code(reason: str) -> str:
    return next((c for text, c in REASON_CODES.items() if reason.startswith(text)), "other")


def record(row: Row) -> dict[str, Any]:
    """One row as the board's JSON: the source, its configuration, both times or the reason."""
    r, a = row.run, row.run.arch
    shape = {k: getattr(a, k) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden")}
    shape.update(vocab=a.vocab, seq_len=a.seq_len, gated_mlp=a.gated_mlp)
    kind = None if row.reason else as_json(run_kind(r))
    return {
        "id": r.id, "source": r.source, "url": r.url, "family": source_family(r),
        "model": a.name, "shape": shape, "hardware": r.hardware, "profile": row.hardware or None,
        "gpus": r.gpus, "gpus_per_node": r.gpus_per_node, "tp": r.tp, "pp": r.pp, "dp": r.dp,
        "cp": r.cp, "schedule": r.schedule, "vpp": r.vpp, "micro_batch": r.micro_batch,
        "global_batch": r.global_batch, "recompute": r.recompute, "precision": r.precision,
        "zero": r.zero, "published_s": row.published_s, "predicted_s": row.predicted_s,
        "baseline_s": row.baseline_s, "error": row.error, "baseline_error": row.baseline_error,
        "held_out_s": row.held_out_s, "held_out_error": row.held_out_error,
        "held_out_ceiling": row.held_out_ceiling, "held_out_pool": row.held_out_pool,
        "reason": row.reason, "reason_code": reason_code(row.reason) if row.reason else None,
        "query": row.query, "kind": kind, "verified": r.verified,
    }  # fmt: skip


def _all(rows: Sequence[Row]) -> dict[str, Any]:
    """In-sample (the shipped constants), held out, and the flat baseline, over ``rows``."""
    held = [r.held_out_error for r in rows if r.held_out_error is not None]
    return {
        "model": summary([r.error for r in rows]),
        "held_out": summary(held),
        "baseline": summary([r.baseline_error for r in rows]),
    }


def kinds(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Every kind the held-out rows cover: its band, whether it is validated, and the same
    rows' in-sample figures beside it."""
    table = by_kind(rows)
    return [
        {
            "kind": as_json(k),
            "validated": len(rs) >= MIN_ROWS,
            **_stats(rs),
            "in_sample": summary([r.error for r in rs]),
        }  # fmt: skip
        for k, rs in sorted(table.items(), key=lambda kv: _order(kv[0]))
    ]


def _pool(rows: Sequence[Row]) -> dict[str, Any]:
    """The ceiling a source's rows were held out at, and what it was fitted on."""
    c = {(r.hardware, r.held_out_ceiling, r.held_out_pool) for r in rows if r.held_out_s}
    return {"held_out_fits": [{"hardware": h, "ceiling": x, "pool": p} for h, x, p in sorted(c)]}


def report(rows: Sequence[Row]) -> dict[str, Any]:
    """The board: every row, the model in-sample and held out and the flat baseline, overall
    and per source family, the bands by kind, how the fit was searched, and how many rows
    each reason leaves out."""
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
        "fit": {
            "grid": list(GRID),
            "limit": LIMIT,
            "presets": {g: e.gemm_max_fraction for g, e in GENERATIONS.items()},
        },
        "summary": _all(predicted),
        "sources": [{"family": f, **_all(rs), **_pool(rs)} for f, rs in sorted(families.items())],
        "kinds": kinds(rows),
        "left_out": [
            {"reason": k, "reason_code": reason_code(k), "rows": n}
            for k, n in sorted(reasons.items())
        ],
        "rows": [record(r) for r in rows],
    }
