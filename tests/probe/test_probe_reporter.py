"""Records reach the server; an outage loses nothing; nothing ever blocks training."""

import time

import pytest
from ingest_server import IngestServer
from probe_support import TINY, launch, records

from app.core.inputs.protocol import Coord, HelloFrame, ModelShape, ProbeRecord, RunInfo
from gpu_probe.reporter import Reporter, Spool

pytestmark = [pytest.mark.probe, pytest.mark.timeout(120)]

TOKEN = "t" * 32
RUN = "rep-test"


def _info() -> RunInfo:
    shape = ModelShape(hidden=64, heads=4, layers=2, vocab=64, seq_len=16, microbatch_size=1)
    return RunInfo(
        run=RUN, dp=1, tp=1, pp=1, order="tp-pp-dp", gpus_per_node=1, schedule="1f1b",
        microbatches=1, virtual_stages=1, steps=100, dtype="fp32", device="cpu", model=shape,
    )  # fmt: skip


def _line(step: int, attempt: int = 0) -> tuple[tuple[int, int], str]:
    rec = ProbeRecord(
        run=RUN, rank=0, coord=Coord(dp=0, pp=0, tp=0), node=0, step=step, attempt=attempt,
        t0=time.time(), events=[{"kind": "F", "microbatch": 0, "chunk": 0, "start": 0, "end": 1}],
        loss=1.0,
    )  # fmt: skip
    return (attempt, step), rec.model_dump_json(exclude_none=True)


def _reporter(tmp_path, server: IngestServer, capacity: int = 256, token: str = TOKEN):
    hello = HelloFrame(rank=0, attempt=0, info=_info())
    return Reporter(Spool(tmp_path / "rank-00000.jsonl"), server.url, token, hello, capacity)


def _publish(reporter, steps) -> float:
    """Publish steps; return the slowest publish call in seconds."""
    slowest = 0.0
    for step in steps:
        start = time.perf_counter()
        reporter.publish(*_line(step))
        slowest = max(slowest, time.perf_counter() - start)
    return slowest


def _wait(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_records_reach_the_server_and_the_spool(tmp_path):
    server = IngestServer(TOKEN)
    server.start()
    try:
        reporter = _reporter(tmp_path, server)
        _publish(reporter, range(5))
        assert reporter.close(timeout_s=10)
        assert server.steps(RUN, 0) == [0, 1, 2, 3, 4]
        assert len(Spool(tmp_path / "rank-00000.jsonl").records()) == 5
    finally:
        server.stop()


def test_an_outage_loses_nothing_and_never_blocks_publishing(tmp_path):
    server = IngestServer(TOKEN)
    server.start()
    reporter = _reporter(tmp_path, server, capacity=2)  # tiny queue: overflow during outage
    try:
        _publish(reporter, range(3))
        assert _wait(lambda: server.steps(RUN, 0) == [0, 1, 2])
        server.stop()
        slowest = _publish(reporter, range(3, 40))  # server down: queue overflows
        assert slowest < 0.25, f"publish blocked for {slowest:.3f} s"  # a connect waits 5 s
        server.start()  # same port, same store
        assert reporter.close(timeout_s=20)
        assert server.steps(RUN, 0) == list(range(40))
        assert all(h.rank == 0 for h in server.hellos) and len(server.hellos) >= 2
    finally:
        server.stop()


def test_a_reconnecting_sender_resends_only_after_the_servers_ack(tmp_path):
    spool = Spool(tmp_path / "rank-00000.jsonl")
    for step in range(6):
        spool.append(_line(step)[1])
    spool.close()
    server = IngestServer(TOKEN)
    for step in range(4):  # the server already has steps 0..3
        server.stored.setdefault((RUN, 0), {})[step] = {"attempt": 0, "step": step}
    server.start()
    try:
        reporter = _reporter(tmp_path, server)
        reporter.publish(*_line(6))
        assert reporter.close(timeout_s=10)
        assert server.steps(RUN, 0) == list(range(7))
        assert server.received == 3  # steps 4, 5 and 6 only
    finally:
        server.stop()


def test_a_refused_token_stops_sending_but_not_spooling(tmp_path):
    server = IngestServer(TOKEN)
    server.start()
    try:
        reporter = _reporter(tmp_path, server, token="wrong")
        assert _publish(reporter, range(3)) < 0.25
        assert _wait(lambda: reporter.sender.error is not None and not reporter.sender.is_alive())
        assert "refused" in reporter.sender.error
        assert not reporter.close(timeout_s=1)
        assert len(Spool(tmp_path / "rank-00000.jsonl").records()) == 3
        assert server.steps(RUN, 0) == []
    finally:
        server.stop()


def test_a_probe_run_streams_to_the_server(tmp_path):
    server = IngestServer(TOKEN)
    server.start()
    try:
        args = [
            "--pp", "2", "--schedule", "1f1b", "--steps", "3", "--run-name", "live",
            "--server", server.url, "--token", TOKEN, "--quiet", *TINY,
        ]  # fmt: skip
        run = launch(args, tmp_path, timeout_s=90)
        assert run.returncode == 0, run.output
        for rank in (0, 1):
            assert server.steps("live", rank) == [0, 1, 2]
        assert {h.info.schedule.value for h in server.hellos} == {"1f1b"}
        assert len(records(tmp_path)) == 6
    finally:
        server.stop()
