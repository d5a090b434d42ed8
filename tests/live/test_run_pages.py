"""/runs/{run} for a run the store never heard of (a 404 page listing the known runs, which
opens the live page once the run is announced) and for an announced run with no records
yet (the live page, saying it waits for them)."""

import asyncio
import re
import threading
import warnings
from pathlib import Path

import pytest
from markupsafe import escape
from support import AUTH, TOKEN, ServerThread, hello, records, run_info
from websockets.asyncio.client import connect

from app import i18n
from app.core.inputs.protocol import ProbeRecord
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

EN, ZH = i18n.strings("en"), i18n.strings("zh")


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "p.sqlite3", ingest_token=TOKEN))) as c:
        yield c


def announce(client, run: str, at: float, steps_with_records: int = 0, **shape):
    """A rank's hello (the run's row), then whole steps, through the app's own store."""
    info = run_info(run, **shape)
    ops = [("hello", (info, 0, 0, at))]
    for step in range(steps_with_records):
        ops += [("record", (ProbeRecord.model_validate(r), at)) for r in records(info, step)]
    client.app.state.live.store.transaction(ops)
    return info


def listed(html: str) -> list[str]:
    """The run links of the 404 page's list, in page order."""
    body = re.search(r'<ul class="known-runs" id="known-runs">(.*?)</ul>', html, re.S).group(1)
    return re.findall(r'<a href="/runs/([\w.-]+)(?:\?lang=zh)?">', body)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_run_is_a_404_page_listing_the_known_runs_newest_first(client, lang):
    announce(client, "older-run", at=100.0, steps_with_records=2)
    announce(client, "newer-run", at=200.0)
    query = "?lang=zh" if lang == "zh" else ""
    page = client.get(f"/runs/typo-run{query}")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    words, other = (ZH, EN) if lang == "zh" else (EN, ZH)
    before, after = words["live.missing_heading"].split("{run}")
    assert f'{before}<code class="run-name">typo-run</code>{after}' in page.text
    for key in ("live.missing_text", "live.known_runs", "nav.runs"):
        assert words[key] in page.text and other[key] not in page.text, key
    # It says it will open the run (escaped as Jinja does: "run's" -> "run&#39;s").
    assert str(escape(words["live.missing_watch"].format(s=3))) in page.text
    assert listed(page.text) == ["newer-run", "older-run"]
    assert f'href="/runs/newer-run{query}"' in page.text  # the language travels along
    assert ('<html lang="zh-CN">' in page.text) == (lang == "zh")
    assert "css/live.css" in page.text and "js/run_missing.js" in page.text  # look + poll


def test_the_404_page_with_no_runs_at_all_says_how_to_start_one(client):
    page = client.get("/runs/first-ever")
    assert page.status_code == 404
    assert listed(page.text) == []
    assert EN["live.none_yet"] in page.text and "--run-name first-ever" in page.text


def test_unknown_runs_are_404_on_the_api_too_and_bad_names_422(client):
    for path in ("/api/runs/typo", "/api/runs/typo/steps", "/api/runs/typo/analysis"):
        res = client.get(path)
        assert res.status_code == 404, path
        assert "typo" in res.json()["detail"], path
    assert client.get("/runs/bad%20name").status_code == 422
    assert client.get("/runs/typo?lang=fr").status_code == 422


def _notice(html: str) -> re.Match:
    return re.search(r'<p class="config" id="run-waiting"( hidden)?>([^<]*)</p>', html)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_announced_run_without_records_is_a_live_page_that_says_it_waits(client, lang):
    announce(client, "hello-only", at=100.0)
    words = ZH if lang == "zh" else EN
    page = client.get(f"/runs/hello-only?lang={lang}")
    assert page.status_code == 200 and "live_page.js" in page.text
    notice = _notice(page.text)
    assert notice.group(1) is None and notice.group(2) == words["live.announced"]
    badge = re.search(
        r'<span class="status" id="run-status" data-status="(\w*)">([^<]*)<', page.text
    )
    assert badge.groups() == ("waiting", words["live.status.waiting"])
    assert '"waiting":true' in page.text.replace(" ", "")  # live_page.js starts from it


def test_the_waiting_notice_is_gone_once_a_record_is_stored(client):
    announce(client, "has-steps", at=100.0, steps_with_records=1)
    page = client.get("/runs/has-steps")
    assert page.status_code == 200
    assert _notice(page.text).group(1) == " hidden"
    assert 'data-status="waiting"' not in page.text


def test_the_404_and_the_waiting_live_page_stay_under_the_js_css_budget(client):
    from asset_budget import page_files

    announce(client, "budget-run", at=1.0)
    for path, status in (("/runs/nope", 404), ("/runs/budget-run", 200)):
        page = client.get(path)
        assert page.status_code == status
        files = page_files(page.text)
        assert any(f.suffix == ".js" for f in files) and all(f.exists() for f in files), path
        assert sum(f.stat().st_size for f in files) < 100_000, path


# -- in Chromium: the 404 page opens the live page once a probe says hello ------------------
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def _say_hello(ws_base: str, info, said: threading.Event, done: threading.Event) -> None:
    """A probe rank's hello over the real ingest socket, held open until the test is done.
    Its own thread and loop: Playwright's sync API keeps a loop running on the test's."""

    async def go() -> None:
        async with connect(ws_base + "/ws/ingest", additional_headers=AUTH) as ws:
            await ws.send(hello(info, 0))
            await ws.recv()  # the ack: the run's row is committed
            said.set()
            await asyncio.get_running_loop().run_in_executor(None, done.wait, 30)

    asyncio.run(go())


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_the_404_page_becomes_the_live_page_when_the_run_is_announced(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium at /usr/bin/chromium")
    app = create_app(Settings(db=tmp_path / "b.sqlite3", ingest_token=TOKEN))
    info = run_info("shared-early", pp=2)
    said, done = threading.Event(), threading.Event()
    with ServerThread(app) as srv, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            first = page.goto(f"{srv.base}/runs/shared-early?lang=zh")
            assert first.status == 404
            page.wait_for_selector("body[data-page=run-missing]")
            producer = threading.Thread(target=_say_hello, args=(srv.ws, info, said, done))
            producer.start()
            assert said.wait(20)
            # The poll (every 3 s) sees the run and reloads: the live page, still in zh.
            page.wait_for_selector("body[data-page=run]", timeout=15_000)
            page.wait_for_function("!document.getElementById('run-waiting').hidden")
            assert page.locator("#run-waiting").inner_text() == ZH["live.announced"]
            assert page.locator("#run-status").inner_text() == ZH["live.status.waiting"]
            assert "lang=zh" in page.url and errors == []
        finally:
            done.set()
            browser.close()
        producer.join(timeout=30)
