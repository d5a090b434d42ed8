"""A run's events in the page's language: an import's report and liveness's reasons are
stored keyed (app/live/event_text.py), and GET /api/runs/{run}?lang=zh words them from the
zh catalogue in ``text`` while ``detail`` stays the English it has always been; an older
database's plain-English detail shows as it is."""

import re
import warnings

import pytest
from support import TOKEN, records, run_info, wait_until

from app import i18n
from app.core.inputs.protocol import ProbeRecord
from app.importers import import_report
from app.importers.trace_store import store_run
from app.live import event_text
from app.live.liveness import Liveness
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

CJK = re.compile(r"[\u4e00-\u9fff]")
EN, ZH = i18n.strings("en"), i18n.strings("zh")


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "e.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def _events(client, run: str, lang: str = "en") -> list[dict]:
    body = client.get(f"/api/runs/{run}" + ("" if lang == "en" else f"?lang={lang}"))
    assert body.status_code == 200
    return body.json()["events"]


def _filled(template: str, **params) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(params[m[1]]), template)


def _report() -> import_report.Report:
    head = dict(run="imp", files=4, records=8, layout="dp=2 x pp=2", first=3)
    tail = dict(residual_ms="0.010", matched=6, step_ms="12.5")
    return import_report.line("trace_head", **head) + import_report.line("residual", **tail)


def test_an_imported_runs_event_reads_in_the_pages_language(client):
    info = run_info("imp", dp=2, pp=2, steps=2)
    recs = [ProbeRecord.model_validate(r) for step in range(2) for r in records(info, step)]
    report = _report()
    store_run(client.app.state.live.store, info, recs, report)

    (en,) = [e for e in _events(client, "imp") if e["kind"] == "imported"]
    assert en["detail"] == en["text"] == str(report)  # the CLI's own lines, as before
    assert [s["key"] for s in en["said"]] == ["live.import.trace_head", "live.import.residual"]

    (zh,) = [e for e in _events(client, "imp", "zh") if e["kind"] == "imported"]
    assert zh["detail"] == str(report)  # the API's field keeps its English
    (head, tail), params = zh["text"].split("\n"), [s["params"] for s in zh["said"]]
    assert head == _filled(ZH["live.import.trace_head"], **params[0])
    assert tail == "  " + _filled(ZH["live.import.residual"], **params[1])
    assert CJK.search(head) and "rank file(s)" not in zh["text"]


def test_an_older_databases_plain_english_detail_still_shows(client):
    live = client.app.state.live
    info = run_info("old", dp=2, pp=2, steps=2)
    live.store.transaction([("hello", (info, 0, 0, 1.0))])
    plain = "meshscope import-trace: run old\n  spans: F 4"
    live.store.transaction([("event", ("old", None, "imported", plain, 2.0))])
    for lang in ("en", "zh"):
        (e,) = [e for e in _events(client, "old", lang) if e["kind"] == "imported"]
        assert (e["detail"], e["text"], e["said"]) == (plain, plain, [])


def test_liveness_events_of_a_failure_read_in_the_pages_language(client):
    # A real sweep's failure (ten ranks dead, rank 0 first) through the server's own
    # handler: the status event and the first_dead event it stores.
    clock = [0.0]
    watch = Liveness(heartbeat_s=5.0, clock=lambda: clock[0], wall=lambda: 900.0)
    watch.watch("dead10", world=10, steps=10)
    for rank in range(10):
        watch.connected("dead10", rank, False)
        clock[0] += 0.01
        watch.disconnected("dead10", rank)
    clock[0] = 20.0
    (change,) = watch.sweep()
    assert change.reason == "rank(s) 0, 1, 2, 3, 4, 5, 6, 7 and 2 more stopped reporting"

    live = client.app.state.live
    live.store.transaction([("hello", (run_info("dead10", dp=5, pp=2, steps=10), 0, 0, 1.0))])
    client.portal.call(live._apply, change)
    assert wait_until(lambda: len(_events(client, "dead10")) == 2)

    en = {e["kind"]: e for e in _events(client, "dead10")}
    assert en["failed"]["text"] == en["failed"]["detail"] == change.reason
    assert en["first_dead"]["text"] == "rank 0 seen dead first"
    zh = {e["kind"]: e for e in _events(client, "dead10", "zh")}
    listed = _filled(ZH["live.verdict.more"], list="0, 1, 2, 3, 4, 5, 6, 7", n=2)
    assert zh["failed"]["text"] == _filled(ZH["live.reason.dead"], ranks=listed)
    assert zh["first_dead"]["text"] == _filled(ZH["live.reason.first_dead"], rank=0)
    assert zh["failed"]["detail"] == change.reason  # the API's English, as before


def test_the_english_catalogue_says_what_liveness_stores():
    for key, english in event_text.REASONS.items():
        assert EN[f"live.reason.{key}"] == english, key
    assert EN[event_text.MORE[0]] == event_text.MORE[1]
    for key in event_text.REASONS:
        assert CJK.search(ZH[f"live.reason.{key}"]), key


def test_a_key_the_catalogue_lacks_keeps_the_english():
    stored = event_text.keyed("rank 3 did a new thing", [event_text.line("live.reason.new")])
    (e,) = event_text.for_page([{"detail": stored}], lambda key: ZH.get(key, key))
    assert e["text"] == "rank 3 did a new thing"
