"""Bytes a first visit moves: each page's HTML plus every script, module, stylesheet and Plotly
it loads, as identity bytes (what the server sent before gzip) beside the bytes that crossed
the wire; and a repeat visit, where the immutable hashed assets come from the browser's cache.

Not a test: prints numbers. Starts its own server on a free loopback port, drives headless
Chromium (one fresh browser context per page, so every visit starts with an empty cache) and
reads the sizes from its network events; every wait is bounded, so it always ends.

    python bench/bench_transfer.py
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.browser.conftest import ARGS, CHROMIUM, ServerThread  # noqa: E402

# The 16,384-GPU world is bench_pages.py's largest.
PAGES = {
    "/": "overview",
    "/flow": "flow",
    "/?dp=256&tp=8&pp=8": "overview",
    "/flow?dp=256&tp=8&pp=8": "flow",
}
COMPARE = "/compare?preset=factory"
WAIT_MS = 120_000


@dataclass
class Visit:
    files: int = 0
    html_identity: int = 0
    html_wire: int = 0
    identity: int = 0
    wire: int = 0


def _record(visit: Visit, response, document: str) -> None:
    """Add one response: its decoded body, and its body as sent (encoded) per Chromium."""
    if response.status >= 300 or response.url.startswith(("data:", "blob:")):
        return
    body = len(response.body())
    # Playwright reports a cache hit as minus its header size: nothing crossed the wire.
    sent = max(0, response.request.sizes()["responseBodySize"])
    visit.files += 1
    visit.identity += body
    visit.wire += sent
    if response.url == document:
        visit.html_identity, visit.html_wire = body, sent


def visit(context, url: str, view: str) -> Visit:
    """Open url, wait until the view has drawn and the network is quiet, sum what came in."""
    out, responses = Visit(), []
    page = context.new_page()
    page.on("response", lambda response: responses.append(response))
    page.goto(url, wait_until="domcontentloaded", timeout=WAIT_MS)
    page.wait_for_selector(f"body[data-ready={view}]", timeout=WAIT_MS)
    page.wait_for_load_state("networkidle", timeout=WAIT_MS)
    for response in responses:
        _record(out, response, url)
    page.close()
    return out


def measure(base: str) -> dict[str, tuple[Visit, Visit]]:
    """Per page: a first visit with an empty cache, then a repeat visit in the same context."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for path, view in PAGES.items():
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            first = visit(context, base + path, view)
            out[path] = (first, visit(context, base + path, view))
            context.close()
        browser.close()
    return out


def html_sizes(base: str, path: str) -> tuple[int, int]:
    """One page's HTML: identity bytes, and the gzip bytes the server sends for it."""
    import httpx

    with httpx.Client(base_url=base, timeout=60) as http:
        plain = http.get(path, headers={"Accept-Encoding": "identity"})
        with http.stream("GET", path, headers={"Accept-Encoding": "gzip"}) as res:
            packed = b"".join(res.iter_raw())
            encoding = res.headers.get("content-encoding")
    if encoding == "gzip":
        assert gzip.decompress(packed) == plain.content, "gzip body differs from identity"
    return len(plain.content), len(packed)


def ratio(identity: int, wire: int) -> str:
    return f"{identity / wire:5.1f}x" if wire else "    -"


def report(per_page: dict[str, tuple[Visit, Visit]], compare: tuple[int, int]) -> None:
    print("first visit, empty cache (headless Chromium): HTML + scripts, modules, CSS, Plotly")
    head = f"  {'page':<24}{'files':>6}{'identity B':>13}{'on wire B':>12}{'ratio':>7}"
    print(head + f"{'HTML id B':>12}{'HTML wire B':>13}{'repeat visit B':>16}")
    for path, (first, again) in per_page.items():
        print(
            f"  {path:<24}{first.files:>6}{first.identity:>13,}{first.wire:>12,}"
            f"{ratio(first.identity, first.wire):>7}{first.html_identity:>12,}"
            f"{first.html_wire:>13,}{again.wire:>16,}"
        )
    plain, packed = compare
    print(
        f"HTML of {COMPARE}: {plain:,} bytes identity, {packed:,} bytes gzip "
        f"({ratio(plain, packed).strip()})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings(db=Path(tmp) / "bench.sqlite3"))
        with ServerThread(app) as base:
            per_page = measure(base)
            compare = html_sizes(base, COMPARE)
    report(per_page, compare)


if __name__ == "__main__":
    main()
