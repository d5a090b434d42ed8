"""A layout given with --dp --tp --pp must cover the traces' world: dp x tp x pp other than
the world the files state is refused, naming the file, the world and the layout, and nothing
is stored (issue 27's "a world size that is not the product" where a world is stated)."""

import sqlite3
from pathlib import Path

import pytest

from app.importers.import_trace import main

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"
pytestmark = pytest.mark.timeout(120)


def test_a_layout_of_another_world_is_refused_and_nothing_stored(tmp_path, capsys):
    db = tmp_path / "w.sqlite3"
    assert main([str(TRACES), "--run", "w", "--db", str(db), "--dp", "1", "--pp", "2"]) != 0
    err = capsys.readouterr().err
    assert "rank0_trace.json.gz" in err and "a world of 4 does not fit" in err
    assert "dp=1 tp=1 pp=2" in err and "(2 ranks)" in err
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 0
