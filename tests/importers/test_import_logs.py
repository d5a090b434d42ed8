"""`meshscope import-trace` of training logs (issue 25 item 3): torchtitan's structured JSONL
and Megatron's per-rank timer lines become the probe's records, holding only what the log
says; bad input is refused naming the file and why, and stores nothing."""

import json
import re
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_import_trace import served

from app.core.traces import TraceError
from app.core.traces.megatron_log import parse_lines as parse_megatron
from app.importers.import_trace import main

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
TITAN = TRACES / "torchtitan"
MEGATRON = TRACES / "megatron" / "megatron_dp2_tp2_pp2.log"


def stored(db: Path, run: str) -> list[dict]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT record FROM steps WHERE run = ? ORDER BY rank, step", (run,))
        return [json.loads(r[0]) for r in rows]


def test_torchtitan_logs_store_the_optimizer_and_leave_fwd_bwd_as_host_time(tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    assert main([str(TITAN), "--run", "titan", "--db", str(db), "--dp", "2", "--pp", "2"]) == 0
    out = capsys.readouterr().out
    assert "torchtitan log(s) 4, 4 rank(s), 12 rank-step record(s)" in out
    assert "layout dp=2 tp=1 pp=2 order tp-dp-pp; torchtitan step 1 is step 0" in out
    assert "fwd_bwd (not stored: host time) 12, optim 12" in out
    records = stored(db, "titan")
    assert [(r["rank"], r["step"]) for r in records] == [(k, s) for k in range(4) for s in range(3)]
    for r in records:
        # One optimizer span a step, where the log put it: after fwd_bwd, inside the step.
        assert [e["kind"] for e in r["events"]] == ["optim"]
        optim = r["events"][0]
        assert 0.03 < optim["start"] < 1.0 and 0.004 < optim["end"] - optim["start"] < 0.5
        assert r["coord"]["pp"] == r["rank"] // 2  # torchtitan's order: tp, dp, then pp
    # The log's own timestamps: each rank's steps in order, t0 from step_start's time_us.
    first = [json.loads(x) for x in next(TITAN.glob("*rank_0.*")).read_text().splitlines()]
    step1 = next(x for x in first if x["log_type_name"] == "step_start" and x["step"] == 1)
    assert records[0]["t0"] == pytest.approx(step1["time_us"] / 1e6)
    with served(db) as client:  # the measured views take the run unchanged
        assert client.get("/api/runs/titan/analysis?step=2").status_code == 200


def test_a_megatron_log_gives_each_rank_its_timers_and_names_the_slow_rank(tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    assert main([str(MEGATRON), "--run", "mega", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    # The layout from the arguments block; Megatron's default order is tp-dp-pp.
    assert "8 rank(s), 24 rank-step record(s); layout dp=2 tp=2 pp=2 order tp-dp-pp" in out
    lines = [ln for ln in out.splitlines() if "straggler" in ln]
    assert len(lines) == 1 and lines[0].startswith("  straggler: rank 5, compute +40.0 ms")
    records = {(r["rank"], r["step"]): r for r in stored(db, "mega")}
    assert len(records) == 24
    spent = {}
    for e in records[(5, 0)]["events"]:
        spent[e["kind"]] = spent.get(e["kind"], 0.0) + e["end"] - e["start"]
    # Iteration 1 as printed for rank 5 (a last-stage rank): forward-compute 81.30 ms, ...
    assert spent == pytest.approx(
        {"pp_recv": 0.01240 + 0.00602, "F": 0.08130, "B": 0.08385, "pp_send": 0.00088,
         "tp": 0.00005, "dp": 0.01840, "optim": 0.00630}, abs=1e-6)  # fmt: skip
    assert records[(5, 0)]["coord"] == {"dp": 0, "pp": 1, "tp": 1}
    # t0: the iteration line's time stamp less its elapsed time (the fixture's first
    # iteration began at 09:30:00; the stamp is read as UTC).
    began = datetime(2026, 12, 5, 9, 30, tzinfo=UTC).timestamp()
    assert records[(0, 0)]["t0"] == pytest.approx(began, abs=1e-3)
    # Stage 0 receives no forward input: the log prints no forward-recv for it, none stored.
    assert all(e["kind"] != "pp_recv" or e["end"] - e["start"] != pytest.approx(0.0124)
               for e in records[(0, 0)]["events"])  # fmt: skip
    with served(db) as client:
        assert client.get("/api/runs/mega/analysis?step=0").status_code == 200


def test_megatron_blocks_of_set_up_and_checkpoint_timers_are_not_steps():
    text = MEGATRON.read_text().splitlines(keepends=True)
    text += ["times across ranks (ms):\n", "  save-checkpoint:\n", "     rank  0: 900.00\n"]
    log = parse_megatron(text, "m.log")
    assert sorted({st.step for st in log.steps}) == [1, 2, 3]
    assert log.hints == {"bf16": 1, "cp": 1, "interval": 1, "pp": 2, "tp": 2, "world": 8}


def _refused(tmp_path, capsys, paths, *extra) -> str:
    db = tmp_path / "db.sqlite3"
    assert main([*map(str, paths), "--run", "bad", "--db", str(db), *extra]) == 2
    assert stored(db, "bad") == []  # nothing of a refused import is stored
    return capsys.readouterr().err


def test_a_truncated_jsonl_is_refused_naming_file_and_line(tmp_path, capsys):
    logs = tmp_path / "logs"
    shutil.copytree(TITAN, logs)
    victim = next(logs.glob("*rank_2.*"))
    victim.write_bytes(victim.read_bytes()[:-40])  # the last record cut mid-line
    lines = victim.read_text().count("\n") + 1
    err = _refused(tmp_path, capsys, [logs])
    assert f"{victim}: line {lines} is not JSON" in err and "truncated" in err


def test_duplicate_ranks_and_two_runs_are_refused(tmp_path, capsys):
    twice = tmp_path / "twice"
    shutil.copytree(TITAN, twice)
    original = next(twice.glob("*rank_1.*"))
    shutil.copy(original, twice / "training.global_rank_1.20990101-000000-AAAAAA.jsonl")
    assert "rank 1 step 1 again" in _refused(tmp_path, capsys, [twice])
    other = tmp_path / "other"
    shutil.copytree(TITAN, other)
    rank0 = next(other.glob("*rank_0.*"))
    rank0.write_text(rank0.read_text().replace('"source": "training"', '"source": "generator"'))
    assert "not one run" in _refused(tmp_path, capsys, [other])
    doubled = tmp_path / "doubled.log"
    doubled.write_text(MEGATRON.read_text() * 2)
    assert "iteration 1 is logged twice" in _refused(tmp_path, capsys, [doubled])


@pytest.mark.parametrize(
    "text, why",
    [
        ("hello\nworld\n", "is neither a PyTorch profiler trace"),
        (" [2026-12-05 09:30:00.1] iteration 1/ 3 | elapsed time per iteration (ms): 9.0 |\n",
         "no 'times across ranks (ms):' block"),
        (" iteration 1/ 3 | elapsed time per iteration (ms): 9.0 |\n(min, max) time across "
         "ranks (ms):\n  forward-compute: (1.00, 2.00)\n", "--timing-log-option all"),
    ],
)  # fmt: skip
def test_a_log_that_is_not_a_per_rank_megatron_log_is_refused(tmp_path, capsys, text, why):
    path = tmp_path / "train.log"
    path.write_text(text)
    err = _refused(tmp_path, capsys, [path])
    assert str(path) in err and why in err


def test_formats_are_not_mixed_and_a_rank_must_fit_the_layout(tmp_path, capsys):
    trace = TRACES / "gloo_dp2_pp2" / "rank0_trace.json.gz"
    log = next(TITAN.glob("*rank_0.*"))
    assert "import one format at a time" in _refused(tmp_path, capsys, [trace, log])
    err = _refused(tmp_path, capsys, [MEGATRON], "--dp", "1", "--tp", "2", "--pp", "2")
    assert "rank 4 is outside the 4 ranks" in err


def test_a_jsonl_line_without_the_fields_is_refused():
    from app.core.traces.torchtitan_log import parse_lines

    with pytest.raises(TraceError, match="x.jsonl: line 1 has no log_type_name"):
        parse_lines(['{"rank": 0}\n'], "x.jsonl")


def test_a_step_the_run_stopped_in_is_left_out_and_said():
    from app.core.traces.torchtitan_log import parse_lines

    path = next(TITAN.glob("*rank_0.*"))
    lines = path.read_text().splitlines(keepends=True)
    cut = max(i for i, x in enumerate(lines) if json.loads(x)["log_type_name"] == "step_end")
    log = parse_lines(lines[:cut], path.name)  # the last step_end never written
    assert [st.step for st in log.steps] == [1, 2]
    assert log.notes == ("rank 0 step 3: no step_end (the run stopped in it), left out",)


def test_megatron_means_over_a_log_interval_are_said_and_unstamped_lines_lie_end_to_end():
    text = MEGATRON.read_text().replace(
        "log_interval .................................... 1",
        "log_interval .................................... 10",
    )
    text = re.sub(r" \[2026-[^\]]*\]", "", text)  # an older Megatron: no time stamp
    log = parse_megatron(text.splitlines(keepends=True), "m.log")
    assert log.notes == ("each record is the mean of the 10 iterations ending at it "
                         "(log_interval)",)  # fmt: skip
    t0 = sorted({(st.step, st.t0) for st in log.steps})
    assert t0[0] == (1, 0.0) and t0[1][1] == pytest.approx(0.2109)  # iteration 1 took 210.9 ms
