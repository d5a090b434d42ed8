"""`meshscope import-trace PATH --follow` (issue 25 item 4): files written after the command
starts are imported as they appear, a growing log's newest (maybe half-written) step is held
back until a later one appears or the follow ends, the command stops by its idle bound, and
following again stores nothing twice."""

import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from app.importers.follow import one_pass
from app.importers.import_trace import main, parse

pytestmark = pytest.mark.timeout(120)
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
MEGATRON = TRACES / "megatron" / "megatron_dp2_tp2_pp2.log"


def stored(db: Path, run: str) -> list[tuple[int, int]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        q = "SELECT rank, step FROM steps WHERE run = ? ORDER BY rank, step"
        try:
            return conn.execute(q, (run,)).fetchall()
        except sqlite3.OperationalError:  # the store is making its tables right now
            return []


def until(done, what: str, limit_s: float = 60.0) -> None:
    """Wait for ``done()``, a bound on a hung test, not a speed check."""
    deadline = time.monotonic() + limit_s
    while not done():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def following(argv: list[str]) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    thread.start()
    return thread, result


def test_traces_written_after_the_start_are_stored_and_the_idle_bound_stops_it(tmp_path):
    watched, db = tmp_path / "traces", tmp_path / "db.sqlite3"
    watched.mkdir()
    argv = [str(watched), "--run", "fol", "--db", str(db), "--follow", "--poll", "0.05",
            "--follow-timeout", "3"]  # fmt: skip
    thread, result = following(argv)
    # As a profiler writes them: each file whole under a temporary name, then renamed.
    for src in sorted((TRACES / "gloo_dp2_pp2").iterdir()):
        shutil.copy(src, watched / f".{src.name}.part")
        os.replace(watched / f".{src.name}.part", watched / src.name)
    until(lambda: len(stored(db, "fol")) == 12, "the 4 ranks' 3 steps stored")
    thread.join(timeout=60)
    assert not thread.is_alive() and result == [0]  # stopped by --follow-timeout
    assert stored(db, "fol") == [(k, s) for k in range(4) for s in range(3)]
    # Following again over the same files: resumed, nothing stored twice.
    args = parse([str(watched), "--run", "fol", "--db", str(db)])
    line, held = one_pass(args, final=False)
    assert "12 record(s), 0 new; steps 0..2" in line and not held


def test_a_growing_megatron_log_is_stored_step_by_step(tmp_path):
    lines = MEGATRON.read_text().splitlines(keepends=True)
    log, db = tmp_path / "train.log", tmp_path / "db.sqlite3"
    log.write_text("".join(lines[:157]))  # the arguments, iterations 1 and 2 (steps 0, 1)
    argv = [str(log), "--run", "meg", "--db", str(db), "--follow", "--poll", "0.05",
            "--follow-timeout", "3"]  # fmt: skip
    thread, result = following(argv)
    until(lambda: stored(db, "meg"), "step 0 stored")
    with log.open("a") as f:  # iteration 3 (step 2) appended
        f.write("".join(lines[157:]))
    thread.join(timeout=60)
    assert not thread.is_alive() and result == [0]
    # Every rank's every step, the last one stored when the follow ended.
    assert stored(db, "meg") == [(k, s) for k in range(8) for s in range(3)]


def test_the_newest_step_of_a_half_written_log_is_held_back(tmp_path):
    lines = MEGATRON.read_text().splitlines(keepends=True)
    log, db = tmp_path / "train.log", tmp_path / "db.sqlite3"
    log.write_text("".join(lines[:200]))  # iteration 2's timer block cut half way
    args = parse([str(log), "--run", "cut", "--db", str(db)])
    line, held = one_pass(args, final=False)
    assert held and "steps 0..0 (step 1 held back while the log grows)" in line
    assert {s for _, s in stored(db, "cut")} == {0}
    log.write_text("".join(lines))  # the rest written: step 1 whole, step 2 held
    line, held = one_pass(args, final=False)
    assert held and {s for _, s in stored(db, "cut")} == {0, 1}
    assert len(stored(db, "cut")) == 16  # step 1 of every rank, from its whole block
    line, held = one_pass(args, final=True)
    assert not held and len(stored(db, "cut")) == 24


def test_bad_bounds_are_refused(tmp_path, capsys):
    argv = [str(tmp_path), "--run", "x", "--db", str(tmp_path / "d"), "--follow", "--poll", "0"]
    assert main(argv) == 2 and "--poll" in capsys.readouterr().err
