"""Server settings from the environment (prefix MESHSCOPE_); unsafe values are refused."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MESHSCOPE_", extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    db: Path = Path("meshscope.sqlite3")
    ingest_token: str | None = Field(None, min_length=16)
    allowed_origins: list[str] = Field(default_factory=list)
    # Threads that run the synchronous routes (pages, JSON API). Their work is CPU-bound
    # Python, so more threads than cores only trade the GIL back and forth and stretch the
    # tail; a few keep requests close to first come, first served.
    compute_threads: int = Field(16, ge=1, le=256)
    # Bytes of scenario JSON kept for repeat requests (app/api/scenario_cache.py); 0 keeps
    # none. A 1,024-GPU interleaved scenario is about 350 KB, so the default holds ~700.
    scenario_cache_bytes: int = Field(256 * 2**20, ge=0, le=64 * 2**30)
    # /metrics cardinality, whatever the store holds: unfinished runs (newest first, at most
    # this many) plus the newest finished ones, and per-rank series only for the N slowest
    # ranks of each run's newest step (a 16k-rank run must not become 16k series).
    metrics_unfinished_runs: int = Field(64, ge=0, le=10_000)
    metrics_finished_runs: int = Field(8, ge=0, le=10_000)
    metrics_slowest_ranks: int = Field(8, ge=0, le=1024)
    # Hardware profile JSON files (app/core/hardware_profile.py), read once at startup and
    # listed beside the presets; from the environment a JSON list: '["a.json", "b.json"]'.
    hardware_profiles: list[Path] = Field(default_factory=list)

    @field_validator("ingest_token")
    @classmethod
    def _no_blank_token(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("ingest_token must not be blank")
        return value
