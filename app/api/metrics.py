"""GET /metrics: the live side in Prometheus text, written by ``prometheus_client``.

A custom collector (prometheus.github.io/client_python/collector/custom/) on a registry of
this app's own, never the process-wide default: it reads the counters and the store at
scrape time. Counter families are named without ``_total``: the library appends it, so the
exposed names stay those dashboards already use. Cardinality is bounded by settings: the
unfinished runs and the newest few finished ones, a fixed set of series each, and per-rank
series only for the N slowest ranks of each run's newest step.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from app.api.read_access import shows_token
from app.api.scenario_cache import ScenarioCache
from app.core.fidelity.measured import axes_beyond
from app.core.inputs.protocol import RunInfo
from app.live.metrics_read import MetricsReader
from app.live.run_metrics import RANK_STATES, RunValues, run_values
from app.live.services import Live
from app.settings import Settings

router = APIRouter(tags=["metrics"])
RUN_STATUSES = ("running", "stale", "incomplete", "failed", "done")  # liveness.py run statuses


def service_families(live: Live) -> Iterator[Metric]:
    s, hub = live.stats, live.hub
    gauges = [
        ("meshscope_viewers", "Open viewer websockets.", hub.viewers),
        ("meshscope_ingest_connections", "Open producer websockets.", s.connections),
        ("meshscope_ingest_rate", "Records stored per second, last 10 s.", s.rate.per_second()),
    ]
    counters = [
        ("meshscope_ingest_frames", "Frames read from producers.", s.frames),
        ("meshscope_ingest_records", "Records stored (new rows).", s.records),
        ("meshscope_ingest_duplicates", "Resent records already held.", s.duplicates),
        ("meshscope_ingest_superseded", "Records of a dead attempt.", s.superseded),
        ("meshscope_ingest_invalid", "Frames answered with an error.", s.invalid),
        ("meshscope_ingest_refused", "Handshakes refused before accept.", s.refused),
        ("meshscope_ingest_policy_closes", "Producers closed with 1008.", s.policy_closes),
        ("meshscope_ingest_throttled", "Frames delayed by the rate cap.", s.throttled),
        ("meshscope_store_commits", "Store transactions.", live.writer.commits),
        ("meshscope_fanout_items", "Items published to viewers.", hub.published),
        ("meshscope_fanout_frames", "Coalesced frames built.", hub.frames),
        ("meshscope_viewer_dropped_frames", "Frames dropped from full viewer queues.",
         hub.dropped),
        ("meshscope_viewer_kicked", "Viewers disconnected for staying full.", hub.kicked),
    ]  # fmt: skip
    for name, help_, value in gauges:
        yield GaugeMetricFamily(name, help_, value=value)
    for name, help_, value in counters:
        yield CounterMetricFamily(name, help_, value=value)


RUN_GAUGES = (
    ("step_time_seconds", "Step time of each run's newest step (its slowest rank).",
     lambda v: v.newest.step_time_s if v.newest else None),
    ("last_step", "Newest step any rank of the run reported.",
     lambda v: v.newest.step if v.newest else None),
    ("planned_steps", "Steps the run was launched for.", lambda v: v.planned_steps),
    ("bubble_share", "Share of the newest step not spent computing (summed over its ranks).",
     lambda v: v.shares.get("bubble")),
    ("tp_share", "Share of the newest step in TP collectives.", lambda v: v.shares.get("tp")),
    ("dp_share", "Share of the newest step in the DP all-reduce.", lambda v: v.shares.get("dp")),
    ("pp_wait_share", "Share of the newest step waiting for pipeline peers.",
     lambda v: v.shares.get("pp_wait")),
    ("cp_share", "Share of the newest step in CP exchanges (runs with context parallelism).",
     lambda v: v.shares.get("cp")),
    ("ep_share", "Share of the newest step in EP all-to-alls (runs with expert parallelism).",
     lambda v: v.shares.get("ep")),
    ("model_flops_per_second_per_gpu", "Model FLOP/s per GPU over the newest step.",
     lambda v: v.flops_per_gpu),
    ("mfu", "Measured MFU over the newest step: model FLOP/s per GPU over the device's peak "
     "(absent when the probe recorded no peak: CPU, fp32 or an unknown GPU).",
     lambda v: v.mfu),
)  # fmt: skip


OPTIONAL = ("cp_share", "ep_share")  # said only while a run has them: 3D scrapes as before


def run_families(runs: list[RunValues]) -> Iterator[Metric]:
    for suffix, help_, value in RUN_GAUGES:
        family = GaugeMetricFamily(f"meshscope_run_{suffix}", help_, labels=["run"])
        for v in runs:
            x = value(v)
            if x is not None:  # a run without records has no step to describe
                family.add_metric([v.run], x)
        if family.samples or suffix not in OPTIONAL:
            yield family
    ranks = GaugeMetricFamily(
        "meshscope_run_ranks", "Ranks of the run in each liveness state.", labels=["run", "state"]
    )
    status = GaugeMetricFamily(
        "meshscope_run_status", "1 for the run's current status.", labels=["run", "status"]
    )
    slowest = GaugeMetricFamily(
        "meshscope_run_slowest_rank_step_time_seconds",
        "Step time of the slowest ranks of the newest step (only the N slowest).",
        labels=["run", "rank"],
    )
    for v in runs:
        for state in RANK_STATES:
            ranks.add_metric([v.run, state], v.ranks[state])
        for s in RUN_STATUSES:
            status.add_metric([v.run, s], 1.0 if v.status == s else 0.0)
        for rank, t in v.newest.slowest if v.newest else []:
            slowest.add_metric([v.run, str(rank)], t)
    yield from (ranks, status, slowest)


def cache_families(cache: ScenarioCache) -> Iterator[Metric]:
    lru = cache.lru
    yield GaugeMetricFamily(
        "meshscope_scenario_cache_entries", "Scenarios held as ready JSON.", value=lru.entries
    )
    yield GaugeMetricFamily("meshscope_scenario_cache_bytes", "Bytes they hold.", value=lru.bytes)
    yield GaugeMetricFamily(
        "meshscope_scenario_cache_max_bytes", "The cache's bound.", value=lru.max_bytes
    )
    counters = [
        ("meshscope_scenario_cache_hits", "Requests answered from the cache.", lru.hits),
        ("meshscope_scenario_cache_misses", "Scenarios evaluated.", lru.misses),
        ("meshscope_scenario_cache_evictions", "Entries evicted by the bound.", lru.evictions),
    ]
    for name, help_, value in counters:
        yield CounterMetricFamily(name, help_, value=value)


class CacheCollector:
    def __init__(self, cache: ScenarioCache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        yield from cache_families(self.cache)


class LiveCollector:
    """Counters from the live objects, per-run values from the store: one query for the
    exported runs, one per run for its newest step; liveness is in memory."""

    def __init__(
        self, live: Live, reader: MetricsReader, settings: Settings, with_runs: bool = True
    ) -> None:
        self.live, self.reader, self.settings = live, reader, settings
        self.with_runs = with_runs

    def runs(self) -> list[RunValues]:
        s = self.settings
        rows = self.reader.exported_runs(s.metrics_unfinished_runs, s.metrics_finished_runs)
        out = []
        for row in rows:
            info = RunInfo.model_validate_json(row["info"])
            beyond = axes_beyond(info)
            newest = self.reader.newest_step(row["run"], s.metrics_slowest_ranks, beyond)
            out.append(run_values(row, newest, self.live.liveness.snapshot(row["run"]), info))
        return out

    def collect(self) -> Iterator[Metric]:
        yield from service_families(self.live)
        if self.with_runs:
            yield from run_families(self.runs())


class Metrics:
    """The app's registries and the store reader their collectors use; built in the lifespan
    beside ``Live``, closed with it. ``public`` leaves out the per-run series: what a scrape
    without the read token gets when MESHSCOPE_READ_TOKEN is set."""

    def __init__(self, live: Live, settings: Settings, cache: ScenarioCache) -> None:
        self.reader = MetricsReader(settings.db)
        self.registry = CollectorRegistry()
        self.registry.register(LiveCollector(live, self.reader, settings))
        self.registry.register(CacheCollector(cache))
        self.public = CollectorRegistry()
        self.public.register(LiveCollector(live, self.reader, settings, with_runs=False))
        self.public.register(CacheCollector(cache))

    def render(self, with_runs: bool = True) -> bytes:
        return generate_latest(self.registry if with_runs else self.public)

    def close(self) -> None:
        self.reader.close()


# Prometheus' text format (text/plain; version=0.0.4), which /openapi.json must say, not JSON.
@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
def metrics(request: Request) -> Response:
    # The service's own counters are public; runs' series need the read token when one is set.
    text = request.app.state.metrics.render(with_runs=shows_token(request))
    return Response(text, media_type=CONTENT_TYPE_LATEST)
