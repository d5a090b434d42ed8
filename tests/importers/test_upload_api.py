"""POST /api/runs/import: a trace set, a torchtitan log or a Megatron log uploaded from /runs
becomes the run `meshscope import-trace` stores (issue 25 item 4): the ingest token needed,
the body capped, bad files refused naming the file, a re-upload storing nothing new."""

import io
import json
import sqlite3
import tarfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(120)
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
TOKEN = "upload-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def client(tmp_path: Path, **settings) -> TestClient:
    s = Settings(db=tmp_path / "live.sqlite3", ingest_token=TOKEN, **settings)
    return TestClient(create_app(s))


def tar_of(paths: list[Path]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for p in paths:
            tar.add(p, arcname=p.name)
    return buf.getvalue()


def upload(c: TestClient, body: bytes, name: str, headers=AUTH, **params):
    params = {"run": "up", "name": name, **params}
    return c.post("/api/runs/import", params=params, content=body, headers=headers)


def stored(db: Path, run: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        q = "SELECT rank, step, record FROM steps WHERE run = ? ORDER BY rank, step"
        return conn.execute(q, (run,)).fetchall()


def test_a_tar_of_traces_is_the_run_the_cli_stores_and_a_reupload_adds_nothing(tmp_path):
    body = tar_of(sorted((TRACES / "gloo_dp2_pp2").iterdir()))
    with client(tmp_path) as c:
        res = upload(c, body, "traces.tar")
        assert res.status_code == 200, res.text
        got = res.json()
        assert (got["run"], got["url"], got["ranks"]) == ("up", "/runs/up", 4)
        assert got["records"] == got["stored"] == 12 and got["bytes"] == len(body)
        assert "layout dp=2 tp=1 pp=2" in got["summary"]
        again = upload(c, body, "traces.tar").json()
        assert (again["records"], again["stored"]) == (12, 0)  # idempotent
        steps = c.get("/api/runs/up/steps").json()
        assert {(r["rank"], r["step"]) for r in steps["records"]} == {
            (k, s) for k in range(4) for s in range(3)
        }
        assert c.get("/api/runs").json()["runs"][0]["run"] == "up"
    # The same files through the CLI: the same records, field for field (t0 aside: none).
    cli_db = tmp_path / "cli.sqlite3"
    assert main([str(TRACES / "gloo_dp2_pp2"), "--run", "up", "--db", str(cli_db)]) == 0
    assert stored(tmp_path / "live.sqlite3", "up") == stored(cli_db, "up")


def test_one_megatron_log_with_layout_flags_from_the_query(tmp_path):
    log = (TRACES / "megatron" / "megatron_dp2_tp2_pp2.log").read_bytes()
    with client(tmp_path) as c:
        res = upload(c, log, "megatron_dp2_tp2_pp2.log")
        assert res.status_code == 200, res.text
        assert res.json()["ranks"] == 8 and "megatron log(s) 1" in res.json()["summary"]
        titan = tar_of(sorted((TRACES / "torchtitan").iterdir()))
        res = upload(c, titan, "titan.tar", run="titan", dp=2, pp=2)
        assert res.status_code == 200, res.text
        assert "layout dp=2 tp=1 pp=2" in res.json()["summary"]


def test_no_token_is_401_a_wrong_one_403_and_nothing_is_stored(tmp_path):
    body = (TRACES / "megatron" / "megatron_dp2_tp2_pp2.log").read_bytes()
    with client(tmp_path) as c:
        assert upload(c, body, "m.log", headers={}).status_code == 401
        wrong = {"Authorization": "Bearer not-the-token-at-all-xx"}
        assert upload(c, body, "m.log", headers=wrong).status_code == 403
        assert c.get("/api/runs").json()["runs"] == []


def test_a_body_over_the_cap_is_413_with_the_cap_named(tmp_path):
    with client(tmp_path, max_import_bytes=2**20) as c:
        res = upload(c, b"x" * (2**20 + 1), "big.log")
        assert res.status_code == 413 and str(2**20) in res.json()["detail"]
        # Sent chunked, with no Content-Length: counted as it arrives, refused past the cap.
        chunks = (b"x" * 65536 for _ in range(17))
        res = c.post("/api/runs/import", params={"run": "up", "name": "big.log"},
                     content=chunks, headers=AUTH)  # fmt: skip
        assert res.status_code == 413 and str(2**20) in res.json()["detail"]
        assert c.get("/api/runs").json()["runs"] == []
        # Every other route keeps the small cap: the upload's is for its own path only.
        res = c.post("/api/hardware/validate", content=b"x" * (2**20 + 1))
        assert res.status_code == 413


def test_bad_files_are_422_naming_the_file_and_why(tmp_path):
    no_rank = (TRACES / "hta" / "distributed_info_not_found.json.gz").read_bytes()
    with client(tmp_path) as c:
        res = upload(c, no_rank, "rank7.json.gz")
        assert res.status_code == 422
        (detail,) = res.json()["detail"]
        assert detail["loc"] == ["body", "rank7.json.gz"]
        assert detail["msg"].startswith("rank7.json.gz: ") and "distributedInfo" in detail["msg"]
        assert "meshscope-upload-" not in res.text  # the private directory is not shown
        res = upload(c, b'{"not": "a trace"}', "x.json")
        assert res.status_code == 422 and "x.json: " in res.json()["detail"][0]["msg"]
        linked = io.BytesIO()
        with tarfile.open(fileobj=linked, mode="w") as tar:
            link = tarfile.TarInfo("evil.json")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(link)
        res = upload(c, linked.getvalue(), "set.tar")
        assert res.status_code == 422 and "set.tar:evil.json: not a regular file" in res.text
        assert upload(c, b"", "a.log").status_code == 422
        res = upload(c, b"abc", "../a.log")
        assert res.status_code == 422 and res.json()["detail"][0]["loc"] == ["query", "name"]
        assert c.get("/api/runs").json()["runs"] == []  # nothing of a refused upload


def test_a_name_taken_by_another_run_is_refused_not_mixed(tmp_path):
    log = (TRACES / "megatron" / "megatron_dp2_tp2_pp2.log").read_bytes()
    traces = tar_of(sorted((TRACES / "gloo_dp2_pp2").iterdir()))
    with client(tmp_path) as c:
        assert upload(c, log, "m.log").status_code == 200
        res = upload(c, traces, "t.tar")
        assert res.status_code == 422 and "exists with another config" in res.text
        steps = c.get("/api/runs/up/steps").json()["records"]
        assert {json.dumps(r["rank"]) for r in steps} == {str(k) for k in range(8)}
