"""Kill the server (SIGKILL) in the middle of a run and start it again on the same database:
the probe's real reporter (gpu_probe.reporter: spool first, resend after the server's ack;
it imports no torch) fills the gap, so 0 steps are missing and 0 are duplicated, and
publishing a step never waits for the server while it is down."""

import json
import sqlite3
import time

import pytest
from support import (
    TOKEN,
    ServerProcess,
    all_steps,
    get_json,
    records,
    run_info,
    wait_until,
)

from app.core.inputs.protocol import HelloFrame
from gpu_probe.reporter import Reporter, Spool

pytestmark = pytest.mark.timeout(120)
RANKS, STEPS, PERIOD_S = 4, 120, 0.02


def _reporters(tmp_path, url, info):
    out = []
    for rank in range(RANKS):
        spool = Spool(tmp_path / "spool" / f"rank-{rank:05d}.jsonl")
        out.append(Reporter(spool, url, TOKEN, HelloFrame(rank=rank, attempt=0, info=info)))
    return out


def test_a_server_killed_mid_run_loses_and_duplicates_nothing(tmp_path):
    db = tmp_path / "live.sqlite3"
    info = run_info("restart", dp=2, pp=2, steps=STEPS)
    server = ServerProcess(db).start()
    reporters = _reporters(tmp_path, server.ws + "/ws/ingest", info)
    spent = {"up": [], "down": []}  # seconds publishing each step, per server phase
    try:
        for step in range(STEPS):
            if step == STEPS // 3:
                server.kill()  # mid-stream, no shutdown: acked = committed must hold
            if step == 2 * STEPS // 3:
                noticed = [r.sender.error for r in reporters]
                server.start()  # same port, same database
            phase = "down" if STEPS // 3 <= step < 2 * STEPS // 3 else "up"
            recs = records(info, step)
            start = time.perf_counter()
            for rank, reporter in enumerate(reporters):
                reporter.publish((0, step), json.dumps(recs[rank]))
            spent[phase].append(time.perf_counter() - start)
            time.sleep(PERIOD_S)
        assert all(noticed), noticed  # every reporter saw the outage
        assert all(r.close(timeout_s=30) for r in reporters), "reporters did not get every ack"
        assert wait_until(
            lambda: get_json(server.base, "/api/runs/restart")["status"] == "done", 10
        )
        stored = all_steps(server.base, "restart")
    finally:
        server.stop()
    keys = [(r["rank"], r["step"]) for r in stored]
    assert sorted(keys) == [(rank, step) for rank in range(RANKS) for step in range(STEPS)]
    with sqlite3.connect(db) as conn:  # no duplicate rows, not even superseded ones
        assert conn.execute("SELECT COUNT(*) FROM steps").fetchone() == (RANKS * STEPS,)
    # Publishing is a local append plus a non-blocking offer: the server being down costs
    # the training loop nothing (a blocked send would show as seconds: open_timeout is 5 s).
    mean = {k: sum(v) / len(v) for k, v in spent.items()}
    assert mean["down"] <= 2 * mean["up"] + 0.002, mean
    assert max(spent["down"]) < 0.25, max(spent["down"])
