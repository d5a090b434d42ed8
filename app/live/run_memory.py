"""The live page's memory table for one step: each rank's measured peaks beside the cost
model's prediction for its pipeline stage.

Measured (app.core.inputs.protocol.ProbeRecord): on CUDA the step's peak allocated and peak
reserved (torch.cuda.max_memory_allocated / max_memory_reserved, reset per step). A CPU run
measures neither; its ``mem`` is the process's peak RSS since start, host memory, served
here as ``rss_bytes`` and never as a GPU figure. ``absent`` says why a rank's GPU figures
are missing: ``cpu`` (nothing to measure) or ``not_reported`` (a CUDA record from a probe
that predates the fields).

Predicted: the cost model's memory view (app/core/views/prediction.py) for the run's own
configuration on the hardware entry the a-priori prediction uses (app.live.a_priori), per
pipeline stage: allocated, reserved and total (reserved plus the per-process floor outside
the allocator, which torch's two counters never see). Every rank of a stage is predicted
alike. No measured number goes in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.inputs.protocol import ProbeRecord, RunInfo
from app.live import a_priori

PREDICTED = a_priori.MEMORY


def predicted(prior: Mapping[str, Any]) -> dict[str, Any]:
    """Per stage the cost model's three figures, with the hardware entry and its capacity,
    from the run's a-priori prediction (one evaluate serves both); ``error`` instead when
    the cost model refuses the configuration."""
    out: dict[str, Any] = {"hardware": prior["hardware"], "basis": prior["basis"]}
    if "error" in prior:
        return out | {"error": prior["error"]}
    return out | prior["memory"]


def _absent(rec: ProbeRecord, device: str) -> str | None:
    if rec.mem_allocated is not None:
        return None
    return "cpu" if device == "cpu" else "not_reported"


def _ratio(measured: int | None, model: float | None) -> float | None:
    """Measured over predicted: above 1 the model under-predicts."""
    return measured / model if measured is not None and model else None


def rank_row(rec: ProbeRecord, device: str, stage: Mapping[str, float] | None) -> dict:
    model = stage or {}
    return {
        "rank": rec.rank,
        "stage": rec.coord.pp,
        "allocated_bytes": rec.mem_allocated,
        "reserved_bytes": rec.mem_reserved,
        "absent": _absent(rec, device),
        # CPU only: there ``mem`` is the host's peak RSS; on CUDA it repeats allocated.
        "rss_bytes": rec.mem if device == "cpu" else None,
        "predicted": {k: model.get(k) for k in PREDICTED},
        "allocated_ratio": _ratio(rec.mem_allocated, model.get("allocated_bytes")),
        "reserved_ratio": _ratio(rec.mem_reserved, model.get("reserved_bytes")),
    }


def memory_json(
    info: RunInfo, records: list[ProbeRecord], prior: Mapping[str, Any]
) -> dict[str, Any]:
    """The table of one step's records (one row per rank, in rank order); ``prior`` is
    a_priori.predict's answer for the run."""
    model = predicted(prior)
    stages = {st["stage"]: st for st in model.get("per_stage", [])}
    rows = [rank_row(r, info.device, stages.get(r.coord.pp)) for r in records]
    return {
        "device": info.device,
        "measured": any(r["absent"] is None for r in rows),
        "per_rank": sorted(rows, key=lambda r: r["rank"]),
        "predicted": model,
    }
