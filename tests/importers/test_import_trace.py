"""`meshscope import-trace`: real traces into a database, then served by the app's own
/api/runs/<name>/steps and views, as a probe's run is."""

import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

from app.cli import main as cli_main
from app.importers.import_trace import main
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
GLOO = TRACES / "gloo_dp2_pp2"


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "import.sqlite3"


def served(db: Path):
    return TestClient(create_app(Settings(db=db, ingest_token="t" * 32)))


def test_gloo_traces_import_and_every_step_is_served(db, capsys):
    assert main([str(GLOO), "--run", "gloo", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "layout dp=2 tp=1 pp=2 order tp-pp-dp; ProfilerStep#1 is step 0" in out
    # 4 ranks x 3 steps x 2 microbatches; 2 all-reduces (weight, bias) and 2 optimizer ranges
    # (zero_grad, step) a step: every span has a probe kind, none is left as host time.
    assert "spans: B 24, F 24, dp 24, optim 24, pp_recv 24, pp_send 24\n" in out
    with served(db) as client:
        body = client.get("/api/runs/gloo/steps").json()
        records = body["records"]
        assert sorted({(r["rank"], r["step"]) for r in records}) == [
            (rank, step) for rank in range(4) for step in (0, 1, 2)
        ]
        for r in records:
            kinds = {e["kind"] for e in r["events"]}
            assert kinds == {"F", "B", "pp_send", "pp_recv", "dp", "optim"}
            assert r["coord"] == {"dp": r["rank"] // 2, "pp": r["rank"] % 2, "tp": 0}
            peers = {e["peer"] for e in r["events"] if e["kind"].startswith("pp_")}
            assert peers == {r["rank"] ^ 1}  # the other stage of its own pipeline
        run = client.get("/api/runs/gloo").json()
        assert (run["info"]["dp"], run["info"]["pp"], run["info"]["microbatches"]) == (2, 2, 2)
        assert run["info"]["steps"] == 3 and run["records"]["expected"] == 12
        assert run["status"] == "done"
        # The measured views take the imported run unchanged: the step's analysis (bubble by
        # cause, replay, prediction) answers.
        analysis = client.get("/api/runs/gloo/analysis?step=2")
        assert analysis.status_code == 200, analysis.text


def test_a_second_import_of_the_same_files_stores_nothing_new(db, capsys):
    assert main([str(GLOO), "--run", "gloo", "--db", str(db)]) == 0
    assert main([str(GLOO), "--run", "gloo", "--db", str(db)]) == 0
    assert "0 new record(s) stored" in capsys.readouterr().out
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM steps WHERE run = 'gloo'").fetchone() == (12,)


def test_a_layout_given_in_part_takes_dp_from_the_world(db, capsys):
    # --pp 2 alone: dp is the 4 ranks over pp, and the order given places pp fastest.
    assert (
        main([str(GLOO), "--run", "part", "--db", str(db), "--pp", "2", "--order", "pp-dp-tp"]) == 0
    )
    assert "layout dp=2 tp=1 pp=2 order pp-dp-tp" in capsys.readouterr().out


def test_the_published_nccl_trace_imports_as_a_dp_run(db):
    path = TRACES / "hta" / "nccl_data.json.gz"
    assert cli_main(["import-trace", str(path), "--run", "hta-ddp", "--db", str(db)]) == 0
    with served(db) as client:
        records = client.get("/api/runs/hta-ddp/steps").json()["records"]
        # ProfilerStep#4..6 (the profiler's wait and warm-up were 0..3) are steps 0..2.
        assert [r["step"] for r in records] == [0, 1, 2] and {r["rank"] for r in records} == {0}
        for r in records:
            counts = {k: sum(e["kind"] == k for e in r["events"]) for k in ("F", "B", "optim")}
            assert counts == {"F": 1, "B": 1, "optim": 2}
            # The 7 collectives' exposed parts (test_trace_parse): some ms of a ~220 ms step.
            dp_s = sum(e["end"] - e["start"] for e in r["events"] if e["kind"] == "dp")
            assert 0.005 < dp_s < 0.025
        assert client.get("/api/runs/hta-ddp").json()["info"]["device"] == "cuda"


def test_a_refused_file_stores_nothing_and_is_named(db, tmp_path, capsys):
    mixed = tmp_path / "mixed"
    shutil.copytree(GLOO, mixed)
    shutil.copy(TRACES / "hta" / "distributed_info_not_found.json.gz", mixed / "zz.json.gz")
    assert main([str(mixed), "--run", "mixed", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "zz.json.gz: has no distributedInfo.rank" in err
    with served(db) as client:
        assert client.get("/api/runs/mixed").status_code == 404


def test_duplicate_ranks_a_bad_layout_and_a_truncated_gz_are_refused(db, tmp_path, capsys):
    twice = tmp_path / "twice"
    twice.mkdir()
    for name in ("a.json.gz", "b.json.gz"):
        shutil.copy(GLOO / "rank0_trace.json.gz", twice / name)
    assert main([str(twice), "--run", "twice", "--db", str(db)]) == 2
    assert "b.json.gz: rank 0 again (also in" in capsys.readouterr().err
    assert main([str(GLOO), "--run", "bad", "--db", str(db), "--dp", "4"]) == 2
    assert "send between ranks 0 and 1 is not between pipeline stages" in capsys.readouterr().err
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes((GLOO / "rank0_trace.json.gz").read_bytes()[:2000])
    assert main([str(cut), "--run", "cut", "--db", str(db)]) == 2
    assert "cut.json.gz: cannot be read" in capsys.readouterr().err


def test_the_report_names_the_rank_that_slept_and_its_phase(db, capsys):
    slow = TRACES / "gloo_dp2_pp2_slow_rank2"  # rank 2 sleeps 30 ms in each forward
    assert main([str(slow), "--run", "slow", "--db", str(db)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "straggler" in ln]
    assert len(lines) == 1 and lines[0].startswith("  straggler: rank 2, compute +")


@pytest.mark.timeout(30)
def test_an_http_server_address_is_refused_at_once_naming_the_socket_form(capsys):
    # The uploader only speaks the ingest socket: an http:// address made it retry forever.
    rc = main([str(GLOO), "--run", "x", "--server", "http://127.0.0.1:9", "--token", "t" * 32])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--server 'http://127.0.0.1:9'" in err and "ws://HOST:PORT/ws/ingest" in err
