"""Server settings from the environment (prefix MESHSCOPE_); unsafe values are refused."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    # hide_input_in_errors: a refused ingest_token is a secret; the error names the setting only.
    model_config = SettingsConfigDict(
        env_prefix="MESHSCOPE_", extra="forbid", hide_input_in_errors=True
    )

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    db: Path = Path("meshscope.sqlite3")
    # Where a run's per-action Parquet segments go (app/live/actions_segments.py): derived
    # from db, safe to delete; default <db>.actions beside it. Shared storage for a site
    # that reads them with another engine (docs/live.md, "Whole-run actions").
    actions_dir: Path | None = None
    ingest_token: str | None = Field(None, min_length=16)
    # When set, measured runs are private: /api/runs*, /runs*, /metrics' run series and the
    # viewer sockets need it: a Bearer header or the cookie /login sets (app/api/read_access.py).
    read_token: str | None = Field(None, min_length=16)
    allowed_origins: list[str] = Field(default_factory=list)
    # Host names the HTTP API answers besides its own (localhost, 127.0.0.1, ::1, the bound
    # host, this machine's name, IP literals): app/api/hosts.py, the DNS-rebinding check.
    # "*.example.com" allows subdomains; "*" allows every name, for use behind a proxy.
    allowed_hosts: list[str] = Field(default_factory=list)
    # Threads that run the synchronous routes (pages, JSON API). Their work is CPU-bound
    # Python, so more threads than cores only trade the GIL back and forth and stretch the
    # tail; a few keep requests close to first come, first served.
    compute_threads: int = Field(16, ge=1, le=256)
    # How long a thread may hold the GIL before the interpreter asks it to pass it on
    # (sys.setswitchinterval; CPython's own default is 5 ms). The event loop needs the GIL a
    # few times per request, so with heavy work in threads each wait costs up to this much:
    # 1 ms took /healthz p99 under 4 heavy requests from 79 to 38 ms (bench/bench_heavy.py).
    gil_switch_interval_s: float = Field(0.001, ge=0.0001, le=0.1)
    # Bytes of scenario JSON kept for repeat requests (app/api/scenario_cache.py); 0 keeps
    # none. A 1,024-GPU interleaved scenario is about 350 KB, so the default holds ~700.
    scenario_cache_bytes: int = Field(256 * 2**20, ge=0, le=64 * 2**30)
    # /metrics cardinality, whatever the store holds: unfinished runs (newest first, at most
    # this many) plus the newest finished ones, and per-rank series only for the N slowest
    # ranks of each run's newest step (a 16k-rank run must not become 16k series).
    metrics_unfinished_runs: int = Field(64, ge=0, le=10_000)
    metrics_finished_runs: int = Field(8, ge=0, le=10_000)
    metrics_slowest_ranks: int = Field(8, ge=0, le=1024)
    # Hardware profile JSON files (app/core/inputs/hardware_profile.py), read once at startup and
    # listed beside the presets; from the environment a JSON list: '["a.json", "b.json"]'.
    hardware_profiles: list[Path] = Field(default_factory=list)
    # Heavy requests (trace, flow data, plan; app/api/limits.py): this many run at once, this
    # many more wait at most heavy_wait_s, and the rest get 429 with Retry-After. Each is
    # CPU-bound Python holding up to ~250 MB, so slots beyond the cores only add memory.
    heavy_slots: int = Field(2, ge=1, le=64)
    heavy_queue: int = Field(8, ge=0, le=1024)
    heavy_wait_s: float = Field(10.0, ge=0, le=600)
    # One client address holds at most this many heavy slots and queues as many more (issue
    # 26: two sockets from one client held both). Behind a proxy every client has the
    # proxy's address: raise it to heavy_slots there.
    heavy_client_slots: int = Field(1, ge=1, le=64)
    # A cost estimate under this share of the biggest scenario needs no slot: a small
    # scenario, compare or page of steps is answered even while big ones queue
    # (app/api/costs.py). 1/64 is pp*microbatches*chunks of 2,048, tens of ms.
    heavy_light_cost: float = Field(1 / 64, ge=0, le=1)
    # A streamed heavy answer (trace, flow) whose send makes no progress this long, or that
    # takes longer than heavy_send_timeout_s in all, is ended and its slot freed. Under
    # heavy_wait_s, so a request queued behind two stalled readers is still served.
    heavy_stall_s: float = Field(5.0, gt=0, le=600)
    heavy_send_timeout_s: float = Field(300.0, gt=0, le=3600)
    # Worker processes that run heavy requests' pure work (app/api/pool.py), so the server's
    # own GIL stays free for its event loop: on its threads, four heavy requests took
    # /healthz p99 to 50-85 ms, in workers 13-30 ms (issue 26, bench/bench_heavy.py on 2
    # shared cores). 0 runs the work on the threads. A job past
    # heavy_send_timeout_s has its worker killed; a worker whose memory passed
    # heavy_process_bytes after a job is replaced by a fresh one.
    heavy_processes: int = Field(2, ge=0, le=64)
    heavy_process_bytes: int = Field(512 * 2**20, ge=64 * 2**20, le=64 * 2**30)
    # The largest request body read (413 past it, before it is buffered): a hardware profile
    # is a few KB; one 300 MB POST added 871 MB of RSS (issue 26).
    max_body_bytes: int = Field(1 * 2**20, ge=1024, le=2**30)
    # The largest trace, log or .tar uploaded on /runs (POST /api/runs/import, 413 past it):
    # streamed to a temporary file, so it bounds disk and parse time, not memory (issue 25).
    max_import_bytes: int = Field(1 * 2**30, ge=2**20, le=2**40)
    # Connections (app/api/connections.py): a request's head must arrive within
    # header_timeout_s of the connection (or of its previous answer), and each read of its
    # body within as long (408, app/api/body_limit.py); an idle keep-alive connection closes
    # after keep_alive_s; one address holds at most client_connections.
    header_timeout_s: float = Field(10.0, gt=0, le=600)
    keep_alive_s: int = Field(5, ge=1, le=600)
    client_connections: int = Field(256, ge=1, le=1_000_000)
    # The flow page embeds its view model when that model's JSON is at most this size (the
    # page is ~2.6x it, with the flow data); above it the page asks the browser to fetch
    # /api/scenario and /api/flow instead (a 393k-event timeline was 104 MB of HTML).
    page_embed_bytes: int = Field(4 * 2**20, ge=0, le=2**30)
    # /api/plan estimates every candidate (~0.8 ms each); more than this is a 422 on gpus.
    # GPT-3 175B on 1,024 GPUs is 2,376 candidates; 15,120 GPUs was 9,264 (7 s of CPU).
    plan_max_candidates: int = Field(4096, ge=1, le=1_000_000)
    # A folder of translation catalogues (<lang>.json, en.json required) read instead of the
    # shipped app/i18n/locales: the page languages are the files it holds (docs/i18n.md).
    i18n_dir: Path | None = None

    @field_validator("allowed_hosts")
    @classmethod
    def _host_patterns(cls, value: list[str]) -> list[str]:
        for host in value:
            name = host[2:] if host.startswith("*.") else host
            if host != "*" and not re.fullmatch(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+", name):
                raise ValueError("allowed_hosts entries are host names without a port, "
                                 "'*.example.com' or '*'")  # fmt: skip
        return value

    @field_validator("ingest_token", "read_token")
    @classmethod
    def _no_blank_token(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(f"{info.field_name} must not be blank")
        if value is not None and value != value.strip():
            # The Bearer header's value is stripped before the compare (app/api/ingest.py),
            # so a token with surrounding whitespace could never match: refuse it at start.
            raise ValueError(f"{info.field_name} must not start or end with whitespace")
        return value
