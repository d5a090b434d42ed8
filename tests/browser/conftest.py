"""Real Chromium against a real server: one browser per session, servers on loopback.

Two servers run in threads of this process: the app as built, and the same app whose pages
are fed the view model without its cost keys (memory, comm, advice, tail, tp_time), so the
page is seen to degrade cleanly when a core sends less. Every request
the browser makes is recorded; a test fails if one leaves 127.0.0.1, or on a console error.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import threading
import time
from pathlib import Path
from urllib.request import urlopen

import pytest
import uvicorn

from app.api import pages
from app.core.evaluate import evaluate
from app.main import create_app
from app.settings import Settings

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parents[2] / "screenshots"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn in a thread, stopped through the handle that started it."""

    def __init__(self, app) -> None:
        self.port = _free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


COST_KEYS = ("memory", "compute", "comm", "step_time_s", "mfu", "tokens_per_s", "advice")


def bare(scenario):
    """The core's view model without its cost keys: what the page must survive."""
    view = {k: v for k, v in evaluate(scenario).items() if k not in COST_KEYS}
    view["timeline"] = {k: v for k, v in view["timeline"].items() if k != "tp_time"}
    view["timeline"]["tail"] = []
    return view


@pytest.fixture(scope="session")
def base_url():
    with ServerThread(create_app(Settings(ingest_token="t" * 32))) as url:
        yield url


@pytest.fixture(scope="session")
def bare_url():
    app = create_app(Settings(ingest_token="t" * 32))
    app.dependency_overrides[pages.get_evaluator] = lambda: bare
    with ServerThread(app) as url:
        yield url


# Module scope, not session: Playwright's sync API keeps an event loop running on the main
# thread while it is open, and later tests that call asyncio.run() would fail beside it.
@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Watch:
    """What a page did: every URL it requested and every console error it printed."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.allowed_errors: list[str] = []

    def console(self, msg) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed_errors)]


@pytest.fixture
def watch():
    return Watch()


@pytest.fixture
def context(browser, watch):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    ctx.on("request", lambda r: watch.requests.append(r.url))
    ctx.on("page", lambda p: _watch_page(p, watch))
    yield ctx
    ctx.close()
    local = ("http://127.0.0.1:", "data:", "blob:")
    outside = [u for u in watch.requests if not u.startswith(local)]
    assert outside == [], "requests left 127.0.0.1"
    assert watch.unexpected_errors() == [], "console errors"


def _watch_page(page, watch) -> None:
    page.on("console", watch.console)
    page.on("pageerror", lambda exc: watch.errors.append(f"pageerror: {exc}"))


@pytest.fixture
def page(context):
    return context.new_page()


def api(base: str, path: str, query: str):
    """The JSON a page's own API answers for this query."""
    with urlopen(f"{base}{path}?{query}") as res:
        return json.load(res)


def url_of(page) -> str:
    """The page's address as the page itself sees it. Playwright's page.url follows
    history.replaceState through an asynchronous event, so right after a click it can
    still show the address before; location.href is read in the page, in order."""
    return page.evaluate("location.href")


def open_view(page, url: str, view: str):
    # Not "load": that waits for Plotly too, and the views draw before it arrives.
    res = page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(f"body[data-ready={view}]")
    return res


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@contextlib.contextmanager
def stored_server(tmp_path_factory, name: str, token: str, *transactions: list):
    """A server on a fresh database holding ``transactions`` (store ops, each list one
    transaction, e.g. tests/live/killed_run.py's runs); yields its base URL."""
    db = tmp_path_factory.mktemp(name) / f"{name}.sqlite3"
    app = create_app(Settings(db=db, ingest_token=token))
    with ServerThread(app) as url:
        for ops in transactions:
            app.state.live.store.transaction(ops)
        yield url
