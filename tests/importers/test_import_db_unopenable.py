"""`meshscope import-trace ... --db PATH` where PATH cannot be a database (a folder, a file
under /proc, a text file): one line naming the path, exit 2, as every other refusal. It
printed sqlite3's traceback ("OperationalError: unable to open database file")."""

from pathlib import Path

import pytest

from app.importers.import_trace import main

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"


@pytest.mark.parametrize("kind", ["folder", "not_a_db"])
def test_an_unopenable_database_is_one_line_naming_it(tmp_path, capsys, kind):
    db = tmp_path
    if kind == "not_a_db":
        db = tmp_path / "notes.txt"
        db.write_text("these are not the pages of a database\n" * 100)
    assert main([str(TRACES), "--run", "x", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"meshscope import-trace: --db {db}: cannot open it as a database")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
