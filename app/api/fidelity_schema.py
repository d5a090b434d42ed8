"""The accuracy board's JSON, as /api/fidelity documents it: rows, summaries per source and
per kind, the held-out fit and the error band each scenario view carries."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from app.core.fidelity.kinds import ConfigKind


class Summary(BaseModel):
    rows: int
    median_abs: float | None
    max_abs: float | None
    within_10pct: int


class ModelAndBaseline(BaseModel):
    model: Summary  # in-sample: the shipped constants, chosen on these rows
    held_out: Summary  # each row at the ceiling fitted without its source
    baseline: Summary


class HeldOutFit(BaseModel):
    hardware: str
    ceiling: float
    pool: Literal["generation", "all"]


class SourceSummary(ModelAndBaseline):
    family: str
    held_out_fits: list[HeldOutFit]


# A kind of configuration, as the core defines it (app/core/fidelity/kinds.py).
Kind = ConfigKind


class Band(Summary):
    kind: Kind
    validated: bool
    sources: list[str]
    ids: list[str]
    hardware: list[str]
    in_sample: Summary


class Fit(BaseModel):
    grid: list[float]
    limit: float
    presets: dict[str, float]


class LeftOut(BaseModel):
    reason: str
    reason_code: str
    rows: int


class FidelityRow(BaseModel):
    id: str
    source: str
    url: str
    family: str
    model: str
    shape: dict[str, int | bool | None]
    hardware: str
    profile: str | None
    gpus: int
    gpus_per_node: int
    tp: int
    pp: int
    dp: int
    cp: int
    schedule: str
    vpp: int | None
    micro_batch: int | None
    global_batch: int | None
    recompute: str
    precision: str
    zero: str
    published_s: float | None
    predicted_s: float | None
    baseline_s: float | None
    error: float | None
    baseline_error: float | None
    held_out_s: float | None
    held_out_error: float | None
    held_out_ceiling: float | None
    held_out_pool: Literal["generation", "all"] | None
    reason: str
    reason_code: str | None
    query: dict[str, str] | None
    kind: Kind | None
    verified: bool


class FidelityReport(BaseModel):
    runs: int
    predicted: int
    baseline_mfu: float
    min_band_rows: int
    fit: Fit
    summary: ModelAndBaseline
    sources: list[SourceSummary]
    kinds: list[Band]
    left_out: list[LeftOut]
    rows: list[FidelityRow]
