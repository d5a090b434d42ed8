"""/metrics on prometheus_client: the exposition parses, the old names stay, the per-run
gauges are right for known records, and the series stay bounded for big and many runs."""

import statistics
import time
import warnings

import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import TOKEN, records, run_info

from app.core.fidelity.measured import breakdown
from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

OLD_NAMES = (
    "meshscope_viewers", "meshscope_ingest_connections", "meshscope_ingest_rate",
    "meshscope_ingest_frames_total", "meshscope_ingest_records_total",
    "meshscope_ingest_duplicates_total", "meshscope_ingest_superseded_total",
    "meshscope_ingest_invalid_total", "meshscope_ingest_refused_total",
    "meshscope_ingest_policy_closes_total", "meshscope_ingest_throttled_total",
    "meshscope_store_commits_total", "meshscope_fanout_items_total",
    "meshscope_fanout_frames_total", "meshscope_viewer_dropped_frames_total",
    "meshscope_viewer_kicked_total", "meshscope_run_step_time_seconds",
)  # fmt: skip


def make_client(tmp_path, **settings):
    s = Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN, **settings)
    return TestClient(create_app(s))


@pytest.fixture
def client(tmp_path):
    with make_client(tmp_path) as c:
        yield c


def seed(client, run, at, steps=2, status=None, **kw):
    """A run written through the app's own store, as ingest would: hello, whole steps,
    then maybe a final status. Returns (info, the newest step's records)."""
    info = run_info(run, **{"steps": 10, **kw})
    ops, last = [("hello", (info, 0, 0, at))], []
    for step in range(steps):
        last = [ProbeRecord.model_validate(r) for r in records(info, step, slow_rank=1)]
        ops += [("record", (r, at)) for r in last]
    if status is not None:
        ops.append(("status", (run, status, None, "", at)))
    client.app.state.live.store.transaction(ops)
    return info, last


def scrape(client) -> dict[tuple[str, tuple], float]:
    """Every sample as (name, sorted labels) -> value, parsed by prometheus_client."""
    resp = client.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"] == prometheus_client.CONTENT_TYPE_LATEST
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(resp.text)
        for s in family.samples
    }


def by_run(samples, name: str, run: str, **labels) -> float:
    key = (name, tuple(sorted({"run": run, **labels}.items())))
    return samples[key]


def test_the_exposition_parses_and_keeps_every_old_name(client):
    seed(client, "old-names", at=1.0)
    samples = scrape(client)
    names = {name for name, _ in samples}
    assert set(OLD_NAMES) <= names, set(OLD_NAMES) - names
    assert samples[("meshscope_viewers", ())] == 0
    # The registry is the app's own: nothing of ours lands in the process-wide default.
    assert b"meshscope_" not in prometheus_client.generate_latest(prometheus_client.REGISTRY)


def test_the_ingest_counters_are_the_live_stats(client):
    stats = client.app.state.live.stats
    stats.frames, stats.invalid, stats.connections = 41, 3, 2
    samples = scrape(client)
    assert samples[("meshscope_ingest_frames_total", ())] == 41
    assert samples[("meshscope_ingest_invalid_total", ())] == 3
    assert samples[("meshscope_ingest_connections", ())] == 2


def test_the_scenario_cache_is_counted(client):
    for _ in range(3):
        assert client.get("/api/scenario", params={"dp": 2, "microbatches": 8}).status_code == 200
    samples = scrape(client)
    assert samples[("meshscope_scenario_cache_misses_total", ())] == 1
    assert samples[("meshscope_scenario_cache_hits_total", ())] == 2
    assert samples[("meshscope_scenario_cache_entries", ())] == 1
    assert samples[("meshscope_scenario_cache_bytes", ())] > 0
    assert samples[("meshscope_scenario_cache_max_bytes", ())] == 256 * 2**20


def test_a_runs_gauges_are_those_of_its_newest_step(client):
    info, newest = seed(client, "known", at=1.0, steps=3, dp=2, tp=2, pp=2, m=4)
    parts = [breakdown(r) for r in newest]  # the core's per-rank split of step 2
    total = sum(b.step_time_s for b in parts)
    samples = scrape(client)

    def get(name, **labels):
        return by_run(samples, name, "known", **labels)

    slowest_s = max(b.step_time_s for b in parts)
    assert get("meshscope_run_step_time_seconds") == pytest.approx(slowest_s)
    assert get("meshscope_run_last_step") == 2 and get("meshscope_run_planned_steps") == 10
    compute = sum(b.compute_s for b in parts)
    assert get("meshscope_run_bubble_share") == pytest.approx((total - compute) / total)
    assert get("meshscope_run_tp_share") == pytest.approx(sum(b.tp_s for b in parts) / total)
    assert get("meshscope_run_dp_share") == pytest.approx(sum(b.dp_s for b in parts) / total)
    assert get("meshscope_run_tp_share") > 0 and get("meshscope_run_dp_share") > 0
    # The same shares as the live page's "of the step" column (mean seconds / mean step).
    mean = client.get("/api/runs/known/analysis").json()["bubble"]["mean"]
    assert get("meshscope_run_tp_share") == pytest.approx(mean["tp"] / mean["step_time_s"])
    assert get("meshscope_run_dp_share") == pytest.approx(mean["dp"] / mean["step_time_s"])
    # The slowest rank first: rank 1 runs 1.5x slower in these records.
    slowest = {k[1]: v for k, v in samples.items()
               if k[0] == "meshscope_run_slowest_rank_step_time_seconds"}  # fmt: skip
    assert max(slowest, key=slowest.get) == (("rank", "1"), ("run", "known"))
    # Narayanan et al. 2021 eq. 3 without recompute: 72 B s l h^2 (1 + s/6h + V/12lh),
    # B = microbatch 1 x 4 microbatches x dp 2; s 16, l 2, h 64, V 64 (support.SHAPE).
    B, s, l, h, V = 8, 16, 2, 64, 64  # noqa: E741, N806
    flops = 72 * B * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))
    step_s = get("meshscope_run_step_time_seconds")
    assert get("meshscope_run_model_flops_per_second_per_gpu") == pytest.approx(
        flops / (step_s * info.world_size)
    )
    assert get("meshscope_run_status", status="running") == 1
    assert get("meshscope_run_status", status="failed") == 0


def test_ranks_are_counted_per_liveness_state(client):
    live = client.app.state.live
    seed(client, "watched", at=3.0, steps=0, dp=2, pp=2)  # announced, 4 ranks
    live.liveness.watch("watched", 4, 10)
    live.liveness.stored("watched", 0, 9, 1.0)  # ranks 0 and 1 stored the final step
    live.liveness.stored("watched", 1, 9, 1.0)
    seed(client, "broke", at=2.0, steps=10, status="failed", pp=2)  # 2 ranks reached step 9
    seed(client, "stopped", at=1.0, steps=4, status="failed", pp=2)
    seed(client, "finished", at=0.5, steps=10, status="done", pp=2)
    samples = scrape(client)

    def states(run):
        return {k[1][1][1]: v for k, v in samples.items()
                if k[0] == "meshscope_run_ranks" and k[1][0] == ("run", run) and v}  # fmt: skip

    assert states("watched") == {"done": 2, "live": 2}
    assert states("broke") == {"done": 2}
    assert states("stopped") == {"dead": 2}
    assert states("finished") == {"done": 2}
    # A run with no record yet has states but no step gauges.
    assert ("meshscope_run_step_time_seconds", (("run", "watched"),)) not in samples
    assert by_run(samples, "meshscope_run_planned_steps", "watched") == 10


def test_series_stay_bounded_for_a_256_rank_run_among_many(tmp_path):
    with make_client(tmp_path, metrics_finished_runs=3, metrics_unfinished_runs=4,
                     metrics_slowest_ranks=5) as client:  # fmt: skip
        seed(client, "big", at=100.0, steps=1, dp=8, tp=8, pp=4)  # 256 ranks
        for i in range(5):
            seed(client, f"going-{i}", at=50.0 + i, steps=1)
        for i in range(20):
            seed(client, f"ended-{i}", at=float(i), steps=1, status="done")
        samples = scrape(client)
    runs = {dict(labels)["run"] for _, labels in samples if labels and "run" in dict(labels)}
    # The 4 newest unfinished (big and going-4..2) and the 3 newest finished.
    assert runs == {"big", "going-4", "going-3", "going-2", "ended-19", "ended-18", "ended-17"}
    big = [k for k in samples if ("run", "big") in k[1]]
    per_rank = [k for k in big if k[0] == "meshscope_run_slowest_rank_step_time_seconds"]
    assert len(per_rank) == 5
    assert len(big) <= 8 + 7 + 5 + 5  # run gauges, rank states, statuses, slowest ranks
    assert len(samples) <= 16 + 7 * (8 + 7 + 5 + 5)
    assert by_run(samples, "meshscope_run_ranks", "big", state="unknown") == 256


def test_a_scrape_of_8_runs_of_64_ranks_is_cheap(client):
    for i in range(8):
        seed(client, f"r{i}", at=float(i), steps=5, dp=4, tp=4, pp=4)  # 64 ranks, 5 steps
    scrape(client)  # warm: connections opened, templates of nothing compiled
    times = []
    for _ in range(10):
        t = time.perf_counter()
        client.get("/metrics")
        times.append(time.perf_counter() - t)
    # Measured ~5 ms per scrape, test client round trip included; loose for shared CPUs.
    assert statistics.median(times) < 0.25, times


def test_mfu_is_the_flops_per_gpu_over_the_recorded_peak_and_absent_without_one(client):
    seed(client, "peaked", at=1.0, steps=2, peak_tflops=0.5)
    seed(client, "unpeaked", at=2.0, steps=2)
    samples = scrape(client)
    per_gpu = by_run(samples, "meshscope_run_model_flops_per_second_per_gpu", "peaked")
    assert by_run(samples, "meshscope_run_mfu", "peaked") == pytest.approx(per_gpu / 0.5e12)
    assert ("meshscope_run_mfu", (("run", "unpeaked"),)) not in samples
    assert by_run(samples, "meshscope_run_model_flops_per_second_per_gpu", "unpeaked") > 0
