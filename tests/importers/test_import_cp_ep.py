"""`meshscope import-trace` of a run with context (cp) and expert (ep) parallelism (issue 25):
each collective is labelled with its axis from its Process Group Ranks under Megatron's rank
folding (dense grid for cp, expert grid for ep), stored with kind cp/ep, and each rank-step
keeps its seconds per axis; a group that fits no axis is still refused, named."""

import json
import sqlite3
from pathlib import Path

import pytest
from cp_ep_traces import SECONDS, layout, write
from test_import_trace import served

from app.importers.import_trace import main

KINDS = {"F", "B", "tp", "cp", "ep", "dp"}


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    return write(tmp_path_factory.mktemp("cp_ep") / "traces")


def _steps(db: Path, run: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT rank, tp_s, cp_s, ep_s, dp_s, step_time_s, record FROM steps WHERE run = ?"
            " ORDER BY rank, step",
            (run,),
        ).fetchall()


def _assert_per_axis(rows: list[tuple]) -> None:
    assert len(rows) == 8 * 3  # tp 2 x cp 2 x dp 2 ranks (ep 4 folds inside), 3 steps
    for _, tp, cp, ep, dp, step, record in rows:
        assert (tp, cp, ep, dp) == pytest.approx(
            tuple(SECONDS[a] for a in ("tp", "cp", "ep", "dp"))
        )
        assert step == pytest.approx(0.0088)
        assert {e["kind"] for e in json.loads(record)["events"]} == KINDS


def test_cp_and_ep_groups_infer_the_layout_and_label_each_collective(traces, tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    assert main([str(traces), "--run", "cpep", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "layout dp=2 tp=2 pp=1 cp=2 ep=4 order pp-tp-cp-dp" in out
    assert "spans: B 24, F 24, cp 24, dp 24, ep 24, tp 24\n" in out
    rows = _steps(db, "cpep")
    _assert_per_axis(rows)
    lay = layout()
    for rank, *_, record in rows:  # the layout's coordinates, cp and ep among them
        c, got = lay.coord(rank), json.loads(record)["coord"]
        assert (got["tp"], got.get("cp", 0), got.get("ep", 0)) == (c.tp, c.cp, c.ep)
    with served(db) as client:
        run = client.get("/api/runs/cpep").json()
        assert (run["info"]["cp"], run["info"]["ep"], run["records"]["expected"]) == (2, 4, 24)
        body = client.get("/api/runs/cpep/steps").json()
        kinds = {e["kind"] for r in body["records"] for e in r["events"]}
        assert kinds == KINDS
        assert client.get("/api/runs/cpep/analysis?step=2").status_code == 200


def test_a_layout_given_with_cp_and_ep_labels_the_same(traces, tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    flags = ["--dp", "2", "--tp", "2", "--cp", "2", "--ep", "4", "--order", "megatron-5d"]
    assert main([str(traces), "--run", "given", "--db", str(db), *flags]) == 0
    assert "layout dp=2 tp=2 pp=1 cp=2 ep=4 order tp-cp-ep-dp-pp" in capsys.readouterr().out
    _assert_per_axis(_steps(db, "given"))


def test_a_scenario_link_with_cp_and_ep_lays_the_run_out(traces, tmp_path, capsys):
    db = tmp_path / "db.sqlite3"
    link = "/?dp=2&tp=2&pp=1&cp=2&ep=4&order=megatron-5d&model=mixtral-8x7b"
    assert main([str(traces), "--run", "linked", "--db", str(db), "--scenario", link]) == 0
    assert "cp=2 ep=4 order tp-cp-ep-dp-pp" in capsys.readouterr().out
    _assert_per_axis(_steps(db, "linked"))


def test_an_ep_that_does_not_fold_and_a_group_of_no_axis_are_refused_named(tmp_path, capsys):
    traces = write(tmp_path / "t")
    db = tmp_path / "db.sqlite3"
    flags = ["--dp", "2", "--tp", "2", "--cp", "2", "--ep", "3"]
    assert main([str(traces), "--run", "bad", "--db", str(db), *flags]) == 2
    assert "layout: ep=3, etp=2 do not fold over tp x cp x dp" in capsys.readouterr().err
    odd = write(tmp_path / "odd", extra=(("allreduce", (0, 3), 9000, 9100),))
    assert main([str(odd), "--run", "odd", "--db", str(db), "--dp", "2", "--tp", "2",
                 "--cp", "2", "--ep", "4"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "rank0_trace.json.gz: process group [0, 3] is no group of tp, cp, ep, dp or pp" in err
    assert "cp=2 ep=4" in err
    assert not db.exists() or _steps(db, "odd") == []


MEGATRON = Path(__file__).resolve().parents[1] / "fixtures/traces/megatron/megatron_dp2_tp2_pp2.log"


def test_a_megatron_log_with_context_parallelism_imports_with_cp(tmp_path, capsys):
    """The fixture's arguments block with context_parallel_size 2: the 8 ranks are then
    tp 2 x cp 2 x pp 2 x dp 1, in Megatron's order; the timers hold no CP collective, so the
    records carry none (left blank, not guessed)."""
    text = MEGATRON.read_text().replace(
        "context_parallel_size ........................... 1",
        "context_parallel_size ........................... 2",
    )
    log = tmp_path / "megatron_cp2.log"
    log.write_text(text)
    db = tmp_path / "db.sqlite3"
    assert main([str(log), "--run", "mega-cp", "--db", str(db)]) == 0
    assert "layout dp=1 tp=2 pp=2 cp=2 order tp-dp-pp" in capsys.readouterr().out
    with sqlite3.connect(db) as conn:
        (info,) = conn.execute("SELECT info FROM runs WHERE run = 'mega-cp'").fetchone()
        sql = "SELECT record FROM steps WHERE run = 'mega-cp' AND step = 0 ORDER BY rank"
        coords = [json.loads(r)["coord"] for (r,) in conn.execute(sql)]
    assert (json.loads(info)["cp"], json.loads(info)["dp"]) == (2, 1)
    # tp fastest, then cp (Megatron's tp-cp-ep-dp-pp): rank 2 is tp 0 cp 1, rank 4 stage 1.
    assert coords[2] == {"dp": 0, "pp": 0, "tp": 0, "cp": 1} and coords[4]["pp"] == 1


def test_the_upload_route_takes_cp_and_ep_and_refuses_bad_ones_naming_the_field(traces, tmp_path):
    from test_upload_api import client, tar_of, upload

    body = tar_of(sorted(traces.iterdir()))
    with client(tmp_path) as c:
        for bad, field in (({"cp": 0}, "cp"), ({"ep": 70_000}, "ep"), ({"cp": "two"}, "cp")):
            res = upload(c, body, "t.tar", **bad)
            assert res.status_code == 422, res.text
            assert res.json()["detail"][0]["loc"] == ["query", field]
        res = upload(c, body, "t.tar", dp=2, tp=2, cp=2, ep=3)  # 3 does not divide dp*cp = 4
        assert res.status_code == 422
        (detail,) = res.json()["detail"]
        assert (detail["loc"], detail["type"]) == (["query", "ep"], "scenario.ep_divides")
        assert detail["ctx"] == {"ep": 3, "dp": 2, "cp": 2, "n": 4}
        assert c.get("/api/runs").json()["runs"] == []
        res = upload(c, body, "t.tar", run="up-cp", dp=2, tp=2, cp=2, ep=4, order="megatron-5d")
        assert res.status_code == 200, res.text
        assert "cp=2 ep=4 order tp-cp-ep-dp-pp" in res.json()["summary"]
        steps = c.get("/api/runs/up-cp/steps").json()["records"]
        assert {e["kind"] for r in steps for e in r["events"]} == KINDS
