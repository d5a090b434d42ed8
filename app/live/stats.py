"""Counters the ingest side keeps for /metrics (the hub keeps the viewer ones)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.live.rates import RateWindow


@dataclass
class IngestStats:
    connections: int = 0  # open producer connections (gauge)
    refused: int = 0  # handshakes refused before accept: token, capacity
    frames: int = 0  # every frame read
    records: int = 0  # records stored (new rows)
    duplicates: int = 0  # records we already held (a resend)
    superseded: int = 0  # records of a dead attempt, stored but not served
    invalid: int = 0  # frames answered with an error frame
    policy_closes: int = 0  # connections closed with 1008 after repeated invalid frames
    throttled: int = 0  # frames delayed by the rate cap
    rate: RateWindow = field(default_factory=RateWindow)
