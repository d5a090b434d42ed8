"""``--scenario URL`` (issue 25 item 1: ``[--dp --tp --pp --order | --scenario URL]``): an
import laid out by a meshscope scenario link stores the run those flags would, view state in
the link (lang) left aside; a link the overview would refuse, one with cp or ep, or one
given beside the flags is refused naming why, nothing stored; the upload route takes the
same link and answers a bad one with a 422 at query.scenario before reading the body."""

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
GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"
LINK = "http://127.0.0.1:8000/?dp=2&tp=1&pp=2&order=tp-pp-dp&schedule=gpipe&microbatches=2&lang=zh"
FLAGS = ["--dp", "2", "--tp", "1", "--pp", "2", "--order", "tp-pp-dp", "--schedule", "gpipe",
         "--microbatches", "2"]  # fmt: skip
TOKEN = "scenario-link-token-0123456789"


def info(db: Path, run: str) -> dict | None:
    if not db.exists():
        return None
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT info FROM runs WHERE run = ?", (run,)).fetchone()
    return None if row is None else {k: v for k, v in json.loads(row[0]).items() if k != "run"}


def test_a_link_lays_the_import_out_as_its_flags_would(tmp_path):
    db = tmp_path / "s.sqlite3"
    assert main([str(GLOO), "--run", "by-link", "--db", str(db), "--scenario", LINK]) == 0
    assert main([str(GLOO), "--run", "by-flags", "--db", str(db), *FLAGS]) == 0
    by_link = info(db, "by-link")
    assert by_link.pop("scenario") == {"tp": "1", "schedule": "gpipe", "microbatches": "2"}
    assert by_link == info(db, "by-flags")
    assert (by_link["schedule"], by_link["microbatches"], by_link["gpus_per_node"]) == (
        "gpipe", 2, 8)  # fmt: skip


def test_a_query_alone_and_a_preset_order_are_read_as_the_page_reads_them(tmp_path):
    db = tmp_path / "s.sqlite3"
    # No dp/tp/pp in a link means the page's defaults; here the traces' dp=2 tp=1 pp=2.
    assert main([str(GLOO), "--run", "q", "--db", str(db),
                 "--scenario", "?tp=1&gpus_per_node=4"]) == 0  # fmt: skip
    got = info(db, "q")
    assert (got["dp"], got["tp"], got["pp"], got["gpus_per_node"]) == (2, 1, 2, 4)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--scenario", "?dp=0&tp=1"], "scenario link: dp: "),
        # A link's cp is a factor of the world: 2 x 2 x 2 ranks are not the 4 files.
        (["--scenario", "?dp=2&tp=1&cp=2"], "does not fit dp=2 tp=1 pp=2 cp=2 order tp-pp-dp"),
        (["--scenario", "?tp=1&schedule=nope"], "scenario link: schedule: "),
        (["--scenario", LINK, "--dp", "2", "--order", "megatron"], "dp, order both given"),
        (["--scenario", "?tp=1&" + "x" * 9000], "over 8192"),
    ],
)
def test_a_bad_link_is_refused_naming_why_and_nothing_is_stored(tmp_path, capsys, extra, said):
    db = tmp_path / "s.sqlite3"
    assert main([str(GLOO), "--run", "bad", "--db", str(db), *extra]) == 2
    assert said in capsys.readouterr().err
    assert info(db, "bad") is None


def test_the_upload_route_takes_the_link_and_refuses_a_bad_one_at_its_field(tmp_path):
    app = create_app(Settings(db=tmp_path / "u.sqlite3", ingest_token=TOKEN))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        _upload_with_links(c, tmp_path)


def _upload_with_links(c: TestClient, tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    body = (GLOO / "rank0_trace.json.gz").read_bytes()
    bad = c.post("/api/runs/import", params={"run": "up", "name": "rank0_trace.json.gz",
                                             "scenario": "?tp=1&ep=2&etp=2"},
                 content=body, headers=auth)  # fmt: skip
    assert bad.status_code == 422  # a run's expert TP is its TP (RunInfo has no etp)
    (detail,) = bad.json()["detail"]
    assert detail["loc"] == ["query", "scenario"] and "etp=2" in detail["msg"]
    both = c.post("/api/runs/import", content=body, headers=auth,
                  params={"run": "up", "name": "x.json.gz", "dp": 2, "scenario": LINK})  # fmt: skip
    assert both.status_code == 422 and both.json()["detail"][0]["loc"] == ["query", "scenario"]
    tar = tmp_path / "gloo.tar"
    with tarfile.open(tar, "w") as t:
        for f in sorted(GLOO.iterdir()):
            t.add(f, arcname=f.name)
    good = c.post("/api/runs/import", params={"run": "up", "name": "gloo.tar", "scenario": LINK},
                  content=tar.read_bytes(), headers=auth)  # fmt: skip
    assert good.status_code == 200, good.text
    got = c.get("/api/runs/up").json()
    run_info = got.get("info", got)
    assert (run_info["schedule"], run_info["microbatches"]) == ("gpipe", 2)


def test_a_linked_import_is_priced_as_the_links_model_on_its_hardware(tmp_path):
    """The a-priori prediction beside an imported run: the link's model (GPT-3 1.3B) on the
    link's hardware (A100 80 GB) with the run's own mesh, not the nominal shape a trace
    leaves (a probe-sized GPT on the default preset)."""
    db = tmp_path / "p.sqlite3"
    link = "?tp=1&model=gpt3-1.3b&hardware=a100-80g&microbatches=2"
    assert main([str(GLOO), "--run", "linked", "--db", str(db), "--scenario", link]) == 0
    assert main([str(GLOO), "--run", "plain", "--db", str(db), "--microbatches", "2"]) == 0
    stored = info(db, "linked")["scenario"]
    assert stored == {"tp": "1", "microbatches": "2", "model": "gpt3-1.3b", "hardware": "a100-80g"}
    assert "scenario" not in info(db, "plain")  # absent, not null, as an older server expects
    with TestClient(create_app(Settings(db=db)), base_url="http://127.0.0.1") as c:
        linked = c.get("/api/runs/linked/analysis").json()["a_priori"]
        plain = c.get("/api/runs/plain/analysis").json()["a_priori"]
    assert (linked["basis"], linked["hardware"]) == ("scenario_link", "a100-80g")
    assert linked["query"]["model"] == "gpt3-1.3b"
    # The run's mesh, dp 2 x tp 1 x pp 2: the link's share form names tp=1 and leaves the
    # page's defaults (dp 2, pp 2) out.
    assert linked["query"]["tp"] == "1" and not {"dp", "pp"} & linked["query"].keys()
    assert plain["basis"] != "scenario_link" and plain["query"]["model"] == "custom"
    # 1.3B parameters on two stages are priced far slower than the probe-sized nominal GPT.
    assert linked["step_time_s"] > 100 * plain["step_time_s"]


def test_prepare_on_parses_namespace_lays_out_eight_gpus_a_node_as_before():
    """``prepare(parse(...))`` (the probe's tests call it so) without a link or the flag: the
    default of 8 GPUs a node, as the flag's default was before links (None then failed)."""
    from app.importers.import_trace import parse, prepare

    assert prepare(parse([str(GLOO), "--run", "p"])).layout.gpus_per_node == 8
    args = parse([str(GLOO), "--run", "p", "--gpus-per-node", "4"])
    assert prepare(args).layout.gpus_per_node == 4
