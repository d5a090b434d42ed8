"""The live page in Chromium: an incomplete run says "incomplete: N records not yet
received" and draws its ranks as ended; a killed rank is drawn dead; dead and stale ranks
are drawn in different colours."""

import asyncio
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import AUTH, TOKEN, ServerThread, get_json, record_frame, records, run_info, wait_until
from test_upload_incomplete import LIVE_STEPS, STEPS, _live_then_end
from websockets.asyncio.client import connect

from app.core.inputs.protocol import HelloFrame
from app.live.config import LiveConfig
from app.main import create_app
from app.settings import Settings

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


async def _one_rank_dies(ws_base, info):
    """Rank 0 keeps its connection; rank 1 sends a step and its socket closes."""
    ranks = []
    for rank in range(info.world_size):
        ws = await connect(ws_base + "/ws/ingest", additional_headers=AUTH)
        await ws.send(HelloFrame(rank=rank, info=info, heartbeat_s=5.0).model_dump_json())
        await ws.recv()
        await ws.send(record_frame(records(info, 0, t0=100.0)[rank]))
        await ws.recv()
        ranks.append(ws)
    await ranks[1].close()
    return ranks[0]


def _in_thread(pool, coro_fn, *args):
    """Playwright's sync API owns this thread's event loop: producers run on another."""
    return pool.submit(lambda: asyncio.run(asyncio.wait_for(coro_fn(*args), 30)))


async def _dies_and_waits(ws_base, info, done: threading.Event):
    alive = await _one_rank_dies(ws_base, info)
    await asyncio.to_thread(done.wait, 20)
    await alive.close()


def _cells(page) -> dict[str, str]:
    cells = page.locator("#rank-states span")
    return {c.get_attribute("data-rank"): c.get_attribute("data-state") for c in cells.all()}


def _status(srv, run: str) -> str | None:
    try:
        return get_json(srv.base, f"/api/runs/{run}")["status"]
    except OSError:
        return None


def test_the_page_shows_unreceived_records_and_dead_ranks(tmp_path, browser):
    app = create_app(Settings(db=tmp_path / "l.sqlite3", ingest_token=TOKEN))
    app.state.live_config = LiveConfig(sweep_s=0.05)
    spooled, dying = run_info("spooled", pp=2, steps=STEPS), run_info("dying", pp=2, steps=50)
    with ServerThread(app) as srv, ThreadPoolExecutor(2) as pool:
        _in_thread(pool, _live_then_end, srv.ws, spooled).result()
        assert wait_until(lambda: _status(srv, "spooled") == "incomplete")
        page = browser.new_page()
        page.goto(f"{srv.base}/runs/spooled")
        note = page.locator("#run-verdict")
        note.wait_for(state="visible", timeout=10_000)
        n = spooled.world_size * (STEPS - LIVE_STEPS)
        assert note.text_content().startswith(f"incomplete: {n} records not yet received")
        assert page.locator("#run-status").text_content() == "incomplete"
        assert _cells(page) == {"0": "ended", "1": "ended"}

        finished = threading.Event()
        producer = _in_thread(pool, _dies_and_waits, srv.ws, dying, finished)
        try:
            assert wait_until(lambda: _status(srv, "dying") == "failed")
            page.goto(f"{srv.base}/runs/dying")
            page.locator('#rank-states span[data-state="dead"]').wait_for(timeout=10_000)
            assert _cells(page) == {"0": "live", "1": "dead"}
        finally:
            finished.set()
            producer.result()
        colours = page.evaluate(
            """async () => {
              const { drawRankStates } = await import("/static/js/live_ranks.js");
              const el = document.createElement("div");
              el.className = "rank-states";
              document.body.append(el);
              drawRankStates(el, { 0: "stale", 1: "dead", 2: "live" }, null);
              return [...el.children].map((c) => getComputedStyle(c).backgroundColor);
            }"""
        )
        assert len(set(colours)) == 3, colours  # stale, dead and live read apart
        page.close()
