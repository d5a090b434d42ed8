"""What a stranger met importing (the QA pass of issue 25): a size flag of 0 was taken as
"infer"; --server without a token failed only after the whole parse; a .json.gz saved as
.json was refused for a utf-8 byte; one rank file of four was stored as a finished run; an
upload's unknown schedule was refused after the body, against the file."""

import shutil
import sqlite3
from pathlib import Path

import pytest
from test_upload_api import client, upload

from app.importers.import_trace import main

GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"


def test_a_size_flag_of_zero_is_refused_naming_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as out:
        main([str(GLOO), "--run", "z", "--dp", "0", "--db", str(tmp_path / "z.sqlite3")])
    assert out.value.code == 2 and "--dp: must be >= 1, not 0" in capsys.readouterr().err
    assert not (tmp_path / "z.sqlite3").exists()


def test_server_without_a_token_is_said_before_the_files_are_read(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MESHSCOPE_INGEST_TOKEN", raising=False)
    missing = tmp_path / "not-read-yet"  # a path that would be refused if it were read
    code = main([str(missing), "--run", "t", "--server", "ws://127.0.0.1:9/ws/ingest"])
    assert code == 2 and "--server needs the ingest token" in capsys.readouterr().err


def test_a_gzip_trace_named_json_is_read_by_its_bytes(tmp_path, capsys):
    renamed = tmp_path / "traces"
    renamed.mkdir()
    for f in GLOO.iterdir():
        shutil.copy(f, renamed / f.name.removesuffix(".gz"))  # rank0_trace.json, gzip inside
    db = tmp_path / "g.sqlite3"
    assert main([str(renamed), "--run", "g", "--db", str(db)]) == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM steps WHERE run = 'g'").fetchone()[0] == 12


def test_one_rank_file_of_four_is_an_incomplete_run_naming_the_others(tmp_path, capsys):
    db = tmp_path / "one.sqlite3"
    assert main([str(GLOO / "rank0_trace.json.gz"), "--run", "one", "--db", str(db)]) == 0
    said = capsys.readouterr().out
    assert "no file for rank(s) 1, 2, 3 of the 4: the run is stored as incomplete" in said
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status, reason FROM runs WHERE run = 'one'").fetchone()
    status, reason = row
    assert (status, reason) == ("incomplete", "rank(s) 1, 2, 3 absent from the import")
    all_four = tmp_path / "all.sqlite3"
    assert main([str(GLOO), "--run", "all", "--db", str(all_four)]) == 0
    with sqlite3.connect(all_four) as conn:
        assert conn.execute("SELECT status FROM runs WHERE run = 'all'").fetchone()[0] == "done"


def test_an_uploads_unknown_schedule_is_refused_at_its_field_before_the_body(tmp_path):
    with client(tmp_path) as c:
        got = upload(c, b"x" * 1000, "t.json", schedule="zzz")
    assert got.status_code == 422
    assert got.json()["detail"][0]["loc"] == ["query", "schedule"]


def test_an_incomplete_import_names_the_missing_rank_files_not_a_probe_spool(tmp_path):
    # Its verdict said "9 records in the spools" and to run meshscope upload SPOOL_DIR: an
    # import has no spool; the missing ranks had no file.
    with client(tmp_path) as c:
        got = upload(c, (GLOO / "rank0_trace.json.gz").read_bytes(), "rank0_trace.json.gz")
        assert got.status_code == 200, got.text
        en = c.get("/api/runs/up").json()
        zh = c.get("/api/runs/up?lang=zh").json()["verdict"]
    v = en["verdict"]
    assert v["status"] == "incomplete" and v["no_file_ranks"] == [1, 2, 3]
    assert v["records"] == {"planned": 12, "received": 3, "in_spool": 0,
                                 "never_produced": 0, "no_file": 9}  # fmt: skip
    assert v["summary"] == "9 rank-steps had no file"
    assert v["lines"] == [
        "Incomplete: the import had no trace file for ranks 1, 2, 3, so 9 rank-steps are "
        "missing. Import again with every rank's file to complete the run."
    ]
    assert "SPOOL" not in " ".join(zh["lines"]) and "没有 trace 文件" in zh["lines"][0]
    assert en["records"]["unreceived"] == 0  # no spool holds them
