"""Two torchrun agents on this machine act as two nodes of 2 ranks: the run completes and
each rank reports the node that app.core.layout.topology assigns it with gpus_per_node = 2."""

import socket
import subprocess
import sys

import pytest
from probe_support import ROOT, TINY, probe_env, records

from app.core.layout.topology import Layout

pytestmark = [pytest.mark.probe, pytest.mark.timeout(240)]


def test_two_torchrun_agents_form_one_run_with_the_core_node_numbers(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "2",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "probe",
        "-m", "gpu_probe", "--dp", "2", "--pp", "2", "--schedule", "1f1b", "--steps", "2",
        "--run-name", "two-nodes", "--out", str(tmp_path), "--collective-timeout", "60",
        "--quiet", *TINY,
    ]  # fmt: skip
    procs = [
        subprocess.Popen(
            agent,
            cwd=ROOT,
            env=probe_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        for _ in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=200)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0], "\n".join(outputs)
    layout = Layout(dp=2, tp=1, pp=2, gpus_per_node=2)
    recs = records(tmp_path)
    every = [(rank, step) for rank in range(4) for step in (0, 1)]
    assert sorted((r["rank"], r["step"]) for r in recs) == every
    for r in recs:
        assert r["run"] == "two-nodes"
        assert r["node"] == layout.node(r["rank"]), r
    assert {r["node"] for r in recs} == {0, 1}
