"""One verdict per run, naming the cause (app.live.verdict): a run whose rank 5 was killed at
step 10 (killed_run.py) says rank 5 failed first at step 10 and what it last did, that the
others were blocked on it and in what, counts only records that exist (1 in a spool, 400
never produced; not "401 not yet received"), and shows one status, the same on the runs
list, the run page and both APIs."""

import asyncio
import re
import warnings

import killed_run
import pytest
from support import (
    TOKEN,
    ServerThread,
    get_json,
    producers,
    record_frame,
    records,
    run_info,
    wait_until,
)

from app import i18n
from app.core.inputs.protocol import ProbeRecord
from app.live import verdict
from app.live.liveness import Liveness
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

EN, ZH = i18n.strings("en"), i18n.strings("zh")
RUN = killed_run.RUN

# 8 ranks x 60 steps that all stopped after step 9: nothing in a spool, no import.
STOPPED_AT_10 = {"planned": 480, "received": 80, "in_spool": 0, "never_produced": 400, "no_file": 0}


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "v.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def seed(client, *ops_lists):
    for ops in ops_lists:
        client.app.state.live.store.transaction(ops)


def test_the_killed_rank_is_named_with_its_step_and_last_action(client):
    seed(client, killed_run.store_ops())
    v = client.get(f"/api/runs/{RUN}").json()["verdict"]
    assert v["status"] == "failed" and v["step"] == 10
    first = v["first"]
    assert (first["rank"], first["step"], first["recorded"]) == (5, 10, False)
    # Its step-9 record is in its spool: the last one received is step 8, ending in optim.
    assert first["last_step"] == 8 and first["action"]["kind"] == "optim"
    assert v["lines"][0] == (
        "Rank 5 failed first, at step 10: it sent no record of that step (killed, or cut off "
        "before it could). The last record received from it, step 8, ended with optimizer."
    )
    assert v["summary"] == "rank 5 at step 10, after optimizer of step 8"


def test_the_others_are_blocked_on_it_each_in_what_it_waited_for(client):
    seed(client, killed_run.store_ops())
    run = client.get(f"/api/runs/{RUN}").json()
    v = run["verdict"]
    waited = {b["rank"]: (b["on"], b["step"], b["action"]["kind"]) for b in v["blocked"]}
    assert waited == {
        0: (5, 10, "dp"), 1: (5, 10, "dp"), 2: (5, 10, "dp"), 3: (5, 10, "dp"),
        4: (5, 10, "tp"), 6: (5, 10, "pp_recv"), 7: (5, 10, "pp_recv"),
    }  # fmt: skip
    by_rank = {b["rank"]: b["action"] for b in v["blocked"]}
    assert by_rank[4]["inside"] == "F" and by_rank[4]["microbatch"] == 0
    assert (by_rank[7]["peer"], by_rank[6]["peer"]) == (5, 4)
    assert v["silent"] == []
    assert v["lines"][1:6] == [
        "The others were blocked on rank 5:",
        "· ranks 0, 1, 2, 3: DP all-reduce",
        "· rank 4: TP all-reduce in forward of microbatch 0",
        "· rank 6: receiving microbatch 0 from rank 4",
        "· rank 7: receiving microbatch 0 from rank 5",
    ]
    # The rank grid marks the first; every rank is still shown dead (they all stopped).
    roles = {r["rank"]: (r["state"], r["role"]) for r in run["ranks"]}
    assert roles[5] == ("dead", "first") and roles[0] == ("dead", "blocked")
    # "stopped reporting" for all eight is liveness's raw reason; the page no longer shows it.
    assert "stopped reporting" not in " ".join(v["lines"])


def test_only_records_that_exist_count_as_not_yet_received(client):
    seed(client, killed_run.store_ops())
    run = client.get(f"/api/runs/{RUN}").json()
    assert run["verdict"]["records"] == {
        "planned": 480, "received": 79, "in_spool": 1, "never_produced": 400, "no_file": 0,
    }  # fmt: skip
    assert run["records"] == {"expected": 480, "received": 79, "unreceived": 1}  # was 401
    line = run["verdict"]["lines"][6]
    assert line == (
        "Records: 79 received, 1 in the probe's spool and not yet received, 400 never produced "
        "(the run stopped at step 10 of 60)."
    )
    assert not any("401" in x for x in run["verdict"]["lines"])


def _badges(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<span class="status"[^>]*data-status="(\w*)">([^<]*)<', html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_run_page_shows_one_status_and_the_verdict(client, lang):
    seed(client, killed_run.store_ops())
    words = ZH if lang == "zh" else EN
    html = client.get(f"/runs/{RUN}?lang={lang}").text
    head = html[html.index('id="run-head"') : html.index('id="timeline-card"')]
    assert _badges(head) == [("failed", words["live.status.failed"])]  # one badge
    assert 'id="stream-state" title=' in head and "hidden></span>" in head  # no 2nd badge
    for gone in ("live · complete", "实时 · 完整"):
        assert gone not in html
    box = re.search(r'<div class="verdict" id="run-verdict" data-status="failed">(.*?)</div>',
                    html, re.S).group(1)  # fmt: skip
    # the records never produced are 400, not 401 (the page's catalogue may hold "401" as an
    # HTTP status key, so the count is looked for where it is shown)
    assert "401" not in box and "401" not in head
    lines = re.findall(r"<p>(.*?)</p>", box)
    api = client.get(f"/api/runs/{RUN}?lang={lang}").json()["verdict"]["lines"]
    assert [x.replace("&#39;", "'") for x in lines] == api  # the server's words, both ways
    if lang == "zh":
        assert lines[0].startswith("rank 5 最先失败：第 10 步")
        assert "1 条在探针的本地缓存中" in lines[6] and "400 条从未产生" in lines[6]


def test_the_runs_list_and_the_run_page_say_the_same(client):
    seed(client, killed_run.store_ops(), killed_run.healthy_ops())
    listed = {r["run"]: r["verdict"] for r in client.get("/api/runs").json()["runs"]}
    page = client.get(f"/api/runs/{RUN}").json()["verdict"]
    for key in ("status", "label", "summary", "step", "first"):
        assert listed[RUN][key] == page[key], key
    assert listed["healthy-run"]["status"] == "complete"
    html = client.get("/runs").text
    row = re.search(rf'<tr data-run="{RUN}">(.*?)</tr>', html, re.S).group(1)
    assert _badges(row) == [("failed", "failed")]
    assert '<span class="verdict-short">rank 5 at step 10, after optimizer of step 8</span>' in row
    healthy = re.search(r'<tr data-run="healthy-run">(.*?)</tr>', html, re.S).group(1)
    assert _badges(healthy) == [("complete", "complete")]
    zh = client.get("/runs?lang=zh").text
    assert "rank 5，第 10 步，第 8 步优化器之后" in zh


def test_a_rank_that_failed_in_its_own_work_is_named_with_its_action_and_error(client):
    seed(client, killed_run.store_ops(culprit_error=True))
    v = client.get(f"/api/runs/{RUN}").json()["verdict"]
    f = v["first"]
    assert (f["rank"], f["step"], f["recorded"], f["action"]["kind"]) == (5, 10, True, "F")
    assert f["action"]["microbatch"] == 2 and "CUDA out of memory" in f["error"]
    assert v["lines"][0].startswith(
        "Rank 5 failed first, at step 10, during forward of microbatch 2: rank 5 (dp1 pp0 tp1"
    )
    # Its partial record says it produced steps 0-9: its step 9 is in its spool.
    assert v["records"]["in_spool"] == 1 and v["records"]["never_produced"] == 400


def test_without_partial_records_the_rank_seen_dead_first_is_named():
    """Older probes send no partial records: every rank lacks step 10, and liveness's first
    death decides; the others are listed as silent, not blocked."""
    rows = {r: (0, 9, 10) for r in range(8)}
    states = dict.fromkeys(range(8), "dead")
    last = {"events": [{"kind": "optim", "start": 0.1, "end": 0.2}], "step": 9}
    v = verdict.decide("failed", 8, 60, states, rows, {}, lambda r: last, first_dead=5)
    assert (v["first"]["rank"], v["first"]["step"]) == (5, 10)
    assert [s["rank"] for s in v["silent"]] == [0, 1, 2, 3, 4, 6, 7] and v["blocked"] == []
    assert v["records"] == STOPPED_AT_10  # every record produced is here
    lines = verdict.words(v, i18n.translator("en"))["lines"]
    assert lines[1] == (
        "No record of step 10 from ranks 0, 1, 2, 3, 4, 6, 7 either: killed as well, or cut off."
    )


@pytest.mark.parametrize(
    ("status", "rows", "states", "expected"),
    [
        ("running", {}, {0: "live"}, "waiting"),
        ("running", {0: (0, 3, 4)}, {0: "live"}, "live"),
        ("done", {0: (0, 9, 10)}, {0: "done"}, "complete"),
        ("incomplete", {0: (0, 3, 4)}, {0: "ended"}, "incomplete"),
        ("stale", {0: (0, 3, 4)}, {0: "stale"}, "stale"),
    ],
)
def test_every_status_has_one_word(status, rows, states, expected):
    v = verdict.decide(status, 1, 10, states, rows, {}, lambda r: None)
    w = verdict.words(v, i18n.translator("en"))
    assert v["status"] == expected and w["label"] == EN[f"live.status.{expected}"]
    if expected == "incomplete":  # ended cleanly: every step exists, 6 of them in the spool
        assert v["records"]["in_spool"] == 6 and w["lines"] == [EN["live.unreceived"].format(n=6)]
    if expected == "stale":
        assert w["summary"] == "rank 0 silent" and "4 of 10 planned records" in w["lines"][0]


def test_liveness_names_the_rank_that_died_first():
    class Clock:
        t = 0.0

    clock = Clock()
    live = Liveness(heartbeat_s=0.5, clock=lambda: clock.t, wall=lambda: 100.0)
    live.watch("r", 3, 10)
    for rank in range(3):
        live.connected("r", rank, False, heartbeat_s=0.5)
    clock.t = 0.1
    live.disconnected("r", 2)  # killed: its socket closes first
    clock.t = 0.3
    live.disconnected("r", 0)  # the ranks it blocked fail after it
    live.disconnected("r", 1)
    clock.t = 1.0
    (change,) = live.sweep()
    assert change.status == "failed" and change.first_dead == 2


def test_a_partial_record_over_ingest_is_kept_apart_from_the_steps(tmp_path):
    """Through the real ingest socket: a record with ``stopped`` is acked and stored as the
    rank's stop, never as a step (no trend row, no record count), and the verdict reads it."""
    app = create_app(Settings(db=tmp_path / "i.sqlite3", ingest_token=TOKEN))
    info = run_info("partial", dp=1, pp=2, steps=5)
    full = records(info, 0, t0=10.0)
    cut = records(info, 1, t0=11.0)[1]
    cut = cut | {
        "events": [
            {"kind": "pp_recv", "microbatch": 0, "chunk": 0, "start": 0.0, "end": 0.5, "peer": 0}
        ],
        "stopped": "receive from rank 0 failed",
    }
    cut.pop("loss", None)

    async def go(ws_base):
        async with producers(ws_base, info, 2) as (r0, r1):
            for ws, rec in ((r0, full[0]), (r1, full[1]), (r1, cut)):
                await ws.send(record_frame(rec))
                ack = await ws.recv()
                assert '"type":"ack"' in ack.replace(" ", "")

    with ServerThread(app) as srv:
        asyncio.run(asyncio.wait_for(go(srv.ws), 20))
        api = f"/api/runs/{info.run}"
        assert wait_until(lambda: get_json(srv.base, api)["records"]["received"] == 2)
        run = get_json(srv.base, api)
        assert [p["step"] for p in run["trend"]] == [0]  # the partial step is not a step
        stops = app.state.live.reader.stops(info.run, 0)
        assert list(stops) == [1] and stops[1]["stopped"] == "receive from rank 0 failed"
        assert get_json(srv.base, "/api/runs")["runs"][0]["records"] == 2


def test_uploading_a_failed_runs_spools_leaves_it_failed(client):
    """`meshscope upload` after the failure says hello and "ended" for every rank: the run
    was shown "incomplete: 32 records not yet received" for steps nobody ran. An ended
    spool that stops before the last step keeps the run failed, and the partial records
    keep the verdict naming rank 5; the spool's one record arrives, none is left."""
    live = Liveness(heartbeat_s=0.5, clock=lambda: 0.0, wall=lambda: 1.0)
    live.watch("r", 2, 14)
    for rank in range(2):
        live.connected("r", rank, False, heartbeat_s=0.5)
        live.ended("r", rank, step=9)  # its spool's last step: 9 of 0..13
    (change,) = live.sweep()
    assert change.status == "failed" and "stopped before the last step" in change.reason
    clean = Liveness(heartbeat_s=0.5, clock=lambda: 0.0, wall=lambda: 1.0)
    clean.watch("r", 1, 14)
    clean.connected("r", 0, False, heartbeat_s=0.5)
    clean.ended("r", 0, step=13)  # ran to the end, records unsent: still incomplete
    assert clean.sweep()[0].status == "incomplete"

    inf = killed_run.info()
    ops = killed_run.store_ops(inf)
    late = [r for r in records(inf, 9, t0=killed_run.T0 + 9) if r["rank"] == 5]
    ops.append(("record", (ProbeRecord.model_validate(late[0]), killed_run.T0 + 20)))
    ops.append(("status", (RUN, "incomplete", None, "rank(s) 0-7 ended", killed_run.T0 + 21)))
    seed(client, ops)
    v = client.get(f"/api/runs/{RUN}").json()["verdict"]
    assert v["status"] == "failed" and v["first"]["rank"] == 5 and v["first"]["last_step"] == 9
    assert v["records"] == STOPPED_AT_10  # every record produced is here
    assert v["lines"][-1] == (
        "Records: 80 received, all the probe produced; 400 never produced (the run stopped at "
        "step 10 of 60)."
    )
