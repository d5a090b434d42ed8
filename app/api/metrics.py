"""GET /metrics: Prometheus text exposition format 0.0.4 (prometheus.io/docs/instrumenting/
exposition_formats): ``# HELP``, ``# TYPE``, then ``name{label="value"} number`` lines."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from app.live.services import Live

router = APIRouter(tags=["metrics"])
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: str) -> str:
    # The format's escapes for label values: backslash, double quote and line feed.
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _metric(out: list[str], name: str, kind: str, help_: str, samples) -> None:
    out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        tags = ",".join(f'{k}="{_label(str(v))}"' for k, v in labels.items())
        out.append(f"{name}{{{tags}}} {value:.6g}" if tags else f"{name} {value:.6g}")


def render(live: Live) -> str:
    s, hub, out = live.stats, live.hub, []
    plain = [
        ("meshscope_viewers", "gauge", "Open viewer websockets.", hub.viewers),
        ("meshscope_ingest_connections", "gauge", "Open producer websockets.", s.connections),
        ("meshscope_ingest_rate", "gauge", "Records stored per second, last 10 s.",
         s.rate.per_second()),
        ("meshscope_ingest_frames_total", "counter", "Frames read from producers.", s.frames),
        ("meshscope_ingest_records_total", "counter", "Records stored (new rows).", s.records),
        ("meshscope_ingest_duplicates_total", "counter", "Resent records already held.",
         s.duplicates),
        ("meshscope_ingest_superseded_total", "counter", "Records of a dead attempt.",
         s.superseded),
        ("meshscope_ingest_invalid_total", "counter", "Frames answered with an error.", s.invalid),
        ("meshscope_ingest_refused_total", "counter", "Handshakes refused before accept.",
         s.refused),
        ("meshscope_ingest_policy_closes_total", "counter", "Producers closed with 1008.",
         s.policy_closes),
        ("meshscope_ingest_throttled_total", "counter", "Frames delayed by the rate cap.",
         s.throttled),
        ("meshscope_store_commits_total", "counter", "Store transactions.", live.writer.commits),
        ("meshscope_fanout_items_total", "counter", "Items published to viewers.", hub.published),
        ("meshscope_fanout_frames_total", "counter", "Coalesced frames built.", hub.frames),
        ("meshscope_viewer_dropped_frames_total", "counter",
         "Frames dropped from full viewer queues.", hub.dropped),
        ("meshscope_viewer_kicked_total", "counter", "Viewers disconnected for staying full.",
         hub.kicked),
    ]  # fmt: skip
    for name, kind, help_, value in plain:
        _metric(out, name, kind, help_, [({}, value)])
    times = live.reader.last_step_times()
    _metric(
        out, "meshscope_run_step_time_seconds", "gauge",
        "Step time of each run's newest step (its slowest rank).",
        [({"run": run}, t) for run, t in sorted(times.items())],
    )  # fmt: skip
    return "\n".join(out) + "\n"


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics")
def metrics(request: Request) -> PlainTextResponse:
    return PlainTextResponse(render(request.app.state.live), media_type=CONTENT_TYPE)
