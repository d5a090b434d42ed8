"""A .tar of profiling cycles uploaded on /runs (issue 25 item 4): torchtitan's
``profiling/traces/iteration_N/rankK_trace.json.gz``, several cycles in one archive, is the run
the CLI stores from the traces folder, each cycle's steps its own, not duplicate ranks (the
upload used to unpack the tar flat, so rank0 of two cycles collided). A tar whose files are
not one folder's cycles (a file beside them, or the cycles of two folders) is refused by
upload and CLI alike, naming both files, keyed so /runs words it in its language."""

import io
import sqlite3
import tarfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from test_import_cycles import LATER, write_cycle

from app import i18n
from app.i18n.errors import message
from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
TOKEN = "cycles-upload-token-0123456789"
STEPS = [(k, s) for k in range(4) for s in (0, 1, 2, 10, 11, 12)]


def upload(c: TestClient, body: bytes, name: str = "traces.tar"):
    return c.post("/api/runs/import", params={"run": "cyc", "name": name}, content=body,
                  headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip


def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(Settings(db=tmp_path / "live.sqlite3", ingest_token=TOKEN)))


def rows(db: Path, run: str) -> list[tuple]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        q = "SELECT rank, step, record FROM steps WHERE run = ? ORDER BY rank, step"
        return conn.execute(q, (run,)).fetchall()


def served(c: TestClient) -> list[dict]:
    """Every record /api/runs/cyc/steps serves, page by page."""
    out, since = [], -1
    while since is not None:
        page = c.get("/api/runs/cyc/steps", params={"since": since}).json()
        out, since = out + page["records"], page["next_since"]
    return out


def cycles(tmp_path: Path) -> Path:
    """Two cycles, ``iteration_3`` and ``iteration_13`` (their last ProfilerStep)."""
    traces = tmp_path / "out" / "profiling" / "traces"
    assert [write_cycle(traces, 0).name, write_cycle(traces, LATER).name] == [
        "iteration_3", "iteration_13"]  # fmt: skip
    return traces


def tar_of(files: dict[str, Path]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for arcname, path in files.items():
            tar.add(path, arcname=arcname)
    return buf.getvalue()


def members(traces: Path, under: str) -> dict[str, Path]:
    """The traces' tar members under ``under``, the first cycle's first."""
    found = sorted(traces.rglob("*.json.gz"), key=lambda p: (len(p.parent.name), str(p)))
    return {f"{under}/{p.relative_to(traces)}": p for p in found}


def test_a_tar_of_two_cycles_is_the_run_the_cli_stores_from_the_folder(tmp_path):
    traces = cycles(tmp_path)
    body = tar_of(members(traces, "profiling/traces"))
    with client(tmp_path) as c:
        res = upload(c, body)
        assert res.status_code == 200, res.text
        got = res.json()
        assert (got["ranks"], got["records"], got["stored"]) == (4, 24, 24)
        assert sorted((r["rank"], r["step"]) for r in served(c)) == STEPS
        assert c.get("/runs/cyc").status_code == 200
        assert upload(c, body).json()["stored"] == 0  # a re-upload adds nothing
    cli_db = tmp_path / "cli.sqlite3"
    assert main([str(traces), "--run", "cyc", "--db", str(cli_db)]) == 0
    assert rows(tmp_path / "live.sqlite3", "cyc") == rows(cli_db, "cyc")
    # The CLI reads the same archive as the folder too (trace_tar.py).
    archive = tmp_path / "traces.tar.gz"
    archive.write_bytes(body)
    tar_db = tmp_path / "tar.sqlite3"
    assert main([str(archive), "--run", "cyc", "--db", str(tar_db)]) == 0
    assert rows(tar_db, "cyc") == rows(cli_db, "cyc")


def refused(tmp_path: Path, body: bytes) -> dict:
    tmp_path.mkdir(exist_ok=True)
    with client(tmp_path) as c:
        res = upload(c, body)
        assert res.status_code == 422, res.text
        assert c.get("/api/runs").json()["runs"] == []  # nothing of a refused upload
    (detail,) = res.json()["detail"]
    assert "meshscope-upload-" not in res.text
    return detail


def test_a_file_beside_the_cycles_is_refused_naming_both(tmp_path, capsys):
    traces = cycles(tmp_path)
    files = members(traces, "traces")
    files["traces/rank4_trace.json.gz"] = traces / "iteration_3" / "rank0_trace.json.gz"
    detail = refused(tmp_path, tar_of(files))
    assert detail["type"] == "trace.cycle_mixed"
    assert detail["ctx"] == {"file": "traces.tar:traces/rank4_trace.json.gz",
                             "other": "traces/iteration_3/rank0_trace.json.gz"}  # fmt: skip
    assert detail["msg"].startswith("traces.tar:traces/rank4_trace.json.gz and traces/iteration_3/")
    zh = message(detail, "zh", i18n.strings("zh"))
    assert zh.startswith("traces.tar:traces/rank4_trace.json.gz 与 traces/iteration_3/")
    # The CLI refuses the same archive, as it would the flat file's rank 0 twice.
    archive = tmp_path / "traces.tar"
    archive.write_bytes(tar_of(files))
    db = tmp_path / "cli.sqlite3"
    assert main([str(archive), "--run", "bad", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "traces/rank4_trace.json.gz and traces/iteration_3/rank0_trace.json.gz" in err
    assert rows(db, "bad") == []


def test_the_cycles_of_two_folders_are_refused_and_a_member_twice_too(tmp_path):
    traces = cycles(tmp_path)
    first = members(traces, "runA")
    other = {k.replace("runA", "runB"): v for k, v in first.items() if "iteration_13" in k}
    detail = refused(tmp_path / "a", tar_of({**first, **other}))
    assert detail["type"] == "trace.cycle_mixed"
    assert detail["ctx"] == {"file": "traces.tar:runB/iteration_13/rank0_trace.json.gz",
                             "other": "runA/iteration_3/rank0_trace.json.gz"}  # fmt: skip
    # One cycle's file twice in the archive (tar allows it): named, as a flat name twice is.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for arcname, path in [*first.items(), next(iter(first.items()))]:
            tar.add(path, arcname=arcname)
    detail = refused(tmp_path / "b", buf.getvalue())
    assert detail["type"] == "trace.member_twice"
    assert detail["ctx"]["name"] == "iteration_3/rank0_trace.json.gz"
