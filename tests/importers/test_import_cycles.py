"""Per-cycle profiler directories (issue 25 item 4): torchtitan writes each profiling cycle's
traces to ``profiling/traces/iteration_N/rankK_trace.json`` (torchtitan tools/profiling.py),
one profiler whose ProfilerStep numbers run on across cycles. Importing the traces folder
takes every cycle's steps as steps of one run; ``--follow`` on it stores each new cycle as it
appears, and nothing twice; a rank twice within one cycle is still refused, naming both."""

import gzip
import json
import os
import shutil
import sqlite3
import tarfile
import threading
import time
from pathlib import Path

import pytest

from app.core.traces import TraceError
from app.importers.follow import one_pass
from app.importers.import_trace import main, parse
from app.importers.trace_files import read_traces, trace_paths

pytestmark = pytest.mark.timeout(120)
GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"
LATER = 10  # the second cycle profiles ProfilerStep#N+10


def write_cycle(traces: Path, shift: int) -> Path:
    """The gloo fixture as the cycle ``shift`` steps (and 60 s) after the first, written as
    a profiler does: whole under a temporary name in the cycle's directory, then renamed."""
    steps = []
    for src in sorted(GLOO.iterdir()):
        doc = json.loads(gzip.decompress(src.read_bytes()))
        for e in doc["traceEvents"]:
            if isinstance(e.get("ts"), (int, float)):
                e["ts"] += shift * 6e6
            if str(e.get("name", "")).startswith("ProfilerStep#"):
                e["name"] = f"ProfilerStep#{int(e['name'].split('#')[1]) + shift}"
                steps.append(int(e["name"].split("#")[1]))
        cycle = traces / f"iteration_{max(steps)}"
        cycle.mkdir(parents=True, exist_ok=True)
        part = cycle / f".{src.name}.part"
        part.write_bytes(gzip.compress(json.dumps(doc).encode()))
        os.replace(part, cycle / src.name)
    return cycle


def stored(db: Path, run: str) -> list[tuple[int, int]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            q = "SELECT rank, step FROM steps WHERE run = ? ORDER BY rank, step"
            return conn.execute(q, (run,)).fetchall()
        except sqlite3.OperationalError:  # the store is making its tables right now
            return []


def test_the_cycles_of_a_traces_folder_are_one_runs_steps(tmp_path):
    traces = tmp_path / "profiling" / "traces"
    write_cycle(traces, 0)
    write_cycle(traces, LATER)
    read = read_traces(trace_paths([traces]))
    assert sorted(t.rank for t in read) == [0, 1, 2, 3]
    first = min(st.step for st in read[0].steps)
    assert [st.step - first for st in read[0].steps] == [0, 1, 2, 10, 11, 12]
    db = tmp_path / "db.sqlite3"
    assert main([str(traces), "--run", "cyc", "--db", str(db)]) == 0
    assert stored(db, "cyc") == [(k, s) for k in range(4) for s in (0, 1, 2, 10, 11, 12)]


def test_a_rank_twice_in_one_cycle_is_refused_naming_both(tmp_path):
    cycle = write_cycle(tmp_path / "traces", 0)
    shutil.copy(cycle / "rank1_trace.json.gz", cycle / "rank1_copy_trace.json.gz")
    with pytest.raises(TraceError, match="rank 1 again") as err:
        read_traces(trace_paths([tmp_path / "traces"]))
    assert "rank1_copy_trace.json.gz" in str(err.value) and "rank1_trace.json.gz" in str(err.value)


def test_follow_stores_each_new_cycle_as_it_appears_and_nothing_twice(tmp_path):
    traces, db = tmp_path / "profiling" / "traces", tmp_path / "db.sqlite3"
    traces.mkdir(parents=True)
    argv = [str(traces), "--run", "fol", "--db", str(db), "--follow", "--poll", "0.05",
            "--follow-timeout", "3"]  # fmt: skip
    result: list = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    thread.start()
    write_cycle(traces, 0)
    deadline = time.monotonic() + 60  # a bound on a hung test, not a speed check
    while len(stored(db, "fol")) < 12:
        assert time.monotonic() < deadline, "the first cycle never stored"
        time.sleep(0.05)
    write_cycle(traces, LATER)
    thread.join(timeout=60)
    assert not thread.is_alive() and result == [0]
    assert stored(db, "fol") == [(k, s) for k in range(4) for s in (0, 1, 2, 10, 11, 12)]
    line, _ = one_pass(parse([str(traces), "--run", "fol", "--db", str(db)]), final=False)
    assert "24 record(s), 0 new; steps 0..12" in line


def test_a_tar_of_the_cycles_reads_as_the_folder(tmp_path):
    traces = tmp_path / "traces"
    write_cycle(traces, 0)
    write_cycle(traces, LATER)
    archive = tmp_path / "traces.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(traces, arcname="traces")
    from_tar = {t.rank: [st.step for st in t.steps] for t in read_traces([archive])}
    from_dir = {t.rank: [st.step for st in t.steps] for t in read_traces(trace_paths([traces]))}
    assert from_tar == from_dir and len(from_tar[0]) == 6
