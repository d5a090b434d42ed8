"""An import writes its run's action segments as it stores the run (CLI --db and the upload
route), so the first whole-run question about an imported run is answered from them, not
after a catch-up of every record (~160 us a record: 16 s at 1,024 ranks x 100 steps); a
catch-up that fails leaves the import stored (the segments are derived, rebuilt later)."""

import tarfile
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from app.importers.import_trace import main
from app.live.actions_segments import Segments
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"
TOKEN = "warm-actions-token-0123456789"


def segment_rows(folder: Path) -> int:
    files = [str(p) for p in folder.glob("*.parquet")]
    assert files, f"no segment in {folder}"
    con = duckdb.connect()
    try:
        return con.execute("SELECT COUNT(DISTINCT id) FROM read_parquet(?)", [files]).fetchone()[0]
    finally:
        con.close()


def test_a_cli_import_leaves_its_segments_written(tmp_path, monkeypatch):
    monkeypatch.delenv("MESHSCOPE_ACTIONS_DIR", raising=False)
    db = tmp_path / "w.sqlite3"
    assert main([str(GLOO), "--run", "warm", "--db", str(db)]) == 0
    folder = tmp_path / "w.sqlite3.actions" / "warm"
    assert segment_rows(folder) == 12  # every record of the 4 ranks x 3 steps
    before = sorted(p.name for p in folder.iterdir())
    segments = Segments(db)
    assert [p.name for p in segments.catch_up("warm")] == before  # nothing left to write


def test_a_cli_import_follows_the_servers_actions_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MESHSCOPE_ACTIONS_DIR", str(tmp_path / "shared"))
    assert main([str(GLOO), "--run", "there", "--db", str(tmp_path / "w.sqlite3")]) == 0
    assert segment_rows(tmp_path / "shared" / "there") == 12


def test_a_failed_catch_up_leaves_the_import_stored(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("MESHSCOPE_ACTIONS_DIR", raising=False)

    def broken(self, run):
        raise duckdb.IOException("disk gone")

    monkeypatch.setattr(Segments, "catch_up", broken)
    db = tmp_path / "w.sqlite3"
    assert main([str(GLOO), "--run", "kept", "--db", str(db)]) == 0
    assert "not caught up after its import" in caplog.text
    with TestClient(create_app(Settings(db=db)), base_url="http://127.0.0.1") as c:
        assert c.get("/api/runs/kept").status_code == 200


def test_an_upload_leaves_its_segments_written(tmp_path):
    db = tmp_path / "u.sqlite3"
    tar = tmp_path / "gloo.tar"
    with tarfile.open(tar, "w") as t:
        for f in sorted(GLOO.iterdir()):
            t.add(f, arcname=f.name)
    app = create_app(Settings(db=db, ingest_token=TOKEN))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        r = c.post("/api/runs/import", params={"run": "up", "name": "gloo.tar"},
                   content=tar.read_bytes(), headers=auth)  # fmt: skip
        assert r.status_code == 200, r.text
        assert segment_rows(tmp_path / "u.sqlite3.actions" / "up") == 12
