"""`meshscope probe --profile`: the probe writes one torch.profiler (Kineto) trace per rank,
and `meshscope import-trace` reads them back as the probe's own records (issue 25 item 2).

The smallest mesh with all three axes, dp=2 x tp=2 x pp=2 (8 ranks on gloo), so every kind of
collective is in the traces; the probe's own spooled records of the same steps are the truth
the import is held to, rank by rank and step by step.
"""

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from probe_support import TINY, launch, records

from app.core.traces import find_stragglers
from app.importers.import_trace import parse, prepare
from gpu_probe.launch import main as probe_main

pytestmark = [pytest.mark.probe, pytest.mark.timeout(300)]
MESH = ["--dp", "2", "--tp", "2", "--pp", "2", "--microbatches", "4", "--quiet", *TINY]


def _profiled(tmp_path: Path, extra: list[str]) -> tuple[Path, list[dict], str]:
    traces = tmp_path / "traces"
    run = launch([*MESH, "--profile", str(traces), *extra], tmp_path / "out", timeout_s=240)
    assert run.returncode == 0, run.output
    return traces, records(tmp_path / "out"), run.output


def _imported(traces: Path, run: str):
    return prepare(parse([str(traces), "--run", run]))


def test_profiled_run_imports_with_each_collective_on_its_axis(tmp_path):
    traces, own, output = _profiled(tmp_path, ["--steps", "3", "--profile-steps", "2"])
    # The directory is printed at the end, one gzip trace per rank with its distributedInfo.
    assert f"[probe] torch.profiler traces (8 ranks): {traces}" in output
    for rank in range(8):
        with gzip.open(traces / f"rank{rank}_trace.json.gz", "rt") as f:
            doc = json.load(f)
        assert (doc["distributedInfo"]["rank"], doc["distributedInfo"]["world_size"]) == (rank, 8)
        names = {e.get("name") for e in doc["traceEvents"]}
        # One warm-up step, then the 2 profiled steps; the schedule's actions as ranges.
        assert {"ProfilerStep#1", "ProfilerStep#2"} <= names and "ProfilerStep#0" not in names
        assert {"F0.0", "F3.0", "B0.0", "B3.0", "optimizer"} <= names
    p = _imported(traces, "profiled")
    # The layout is inferred from the traces alone: pipelines from the send/recv peers, TP and
    # DP from the groups the probe's ranges name (gloo's own annotations name none).
    layout = p.layout
    assert (layout.dp, layout.tp, layout.pp, layout.order) == (2, 2, 2, ("tp", "pp", "dp"))
    assert not any("not stored" in k for k in p.kinds), p.kinds  # every span has a kind
    truth = {(r["rank"], r["step"]): r for r in own}
    assert sorted((r.rank, r.step) for r in p.records) == [
        (rank, step) for rank in range(8) for step in (0, 1)
    ]
    for rec in p.records:
        mine = truth[(rec.rank, rec.step + 1)]  # ProfilerStep#1 (the probe's step 1) is step 0
        # Each collective on its axis: as many tp and dp all-reduces, sends and receives as
        # the probe timed itself in that step (32 tp, 1 dp, 4 + 4 pp on every rank here).
        assert Counter(e.kind for e in rec.events) == Counter(e["kind"] for e in mine["events"])
        peers = {e.peer for e in rec.events if e.kind.startswith("pp_")}
        assert peers == {e["peer"] for e in mine["events"] if e["kind"].startswith("pp_")}
        assert peers == set(layout.group("pp", rec.rank)) - {rec.rank}
        compute = sorted((e.kind, e.microbatch) for e in rec.events if e.kind in ("F", "B"))
        assert compute == [(k, mb) for k in "BF" for mb in range(4)]
        coord = (rec.coord.dp, rec.coord.pp, rec.coord.tp)
        assert coord == (rec.rank // 4, rec.rank // 2 % 2, rec.rank % 2)
    # Every rank runs on one clock here: the offsets found are small against a step.
    assert max(abs(v) for v in p.alignment.offsets_us.values()) < p.alignment.step_us / 10


def test_a_slow_rank_is_named_with_its_phase(tmp_path):
    traces, _, _ = _profiled(
        tmp_path, ["--steps", "4", "--profile-steps", "3", "--slow-rank", "5", "--slow-ms", "30"]
    )
    p = _imported(traces, "slow")
    found = find_stragglers(p.records, p.layout)
    # The slow GPU is the one rank named, and the largest excess. Eight gloo ranks share two
    # cores here, so a collective can stretch by scheduling alone: a link past the threshold
    # by that noise (1 run in 3 named TP group (6, 7)) is not what this test is about.
    assert [(s.phase, s.ranks) for s in found if s.cause == "rank"] == [("compute", (5,))]
    assert (found[0].cause, found[0].ranks) == ("rank", (5,))
    # 4 forwards a step, each 30 ms longer: about 120 ms a step over its stage's median.
    assert 0.06 < found[0].excess_s < 0.5, found


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--slow-rank", "2"], "--slow-rank 2 is not a rank of 1"),
        (["--slow-ms", "-1"], "--slow-ms must be in"),
        (["--profile-steps", "0"], "--profile-steps must be >= 1"),
        # Cut to what --steps left, silently, before.
        (
            ["--profile", "", "--steps", "4", "--profile-steps", "4"],
            "--profile-steps 4 is more than the 3 step(s) --steps 4 leaves to profile after one "
            "warm-up step",
        ),
        (
            ["--profile", "", "--steps", "1", "--profile-steps", "2"],
            "--profile-steps 2 is more than the 1 step(s) --steps 1 leaves to profile",
        ),
    ],
)
def test_bad_profile_flags_fail_before_any_rank_starts(argv, message, capsys):
    assert probe_main(argv) == 2
    assert re.search(re.escape(message), capsys.readouterr().err)
