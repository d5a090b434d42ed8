"""/docs and /redoc in real Chromium with no network but loopback: the operations render.

The ``context`` fixture fails a test if any request left 127.0.0.1 or the console logged an
error, so a CDN URL left anywhere in either page fails here.
"""

import pytest

pytestmark = pytest.mark.browser


def test_swagger_ui_renders_the_operations_from_this_server(page, base_url, watch):
    page.goto(f"{base_url}/docs", wait_until="domcontentloaded")
    operation = page.locator(".opblock-summary-path[data-path='/api/scenario']")
    operation.wait_for(state="visible", timeout=30_000)
    assert operation.inner_text().strip() == "/api/scenario"
    assert page.locator(".opblock").count() > 5
    assert any(
        "/vendor/docs-" in url and url.endswith("swagger-ui-bundle.js") for url in watch.requests
    )


def test_redoc_renders_the_operations_from_this_server(page, base_url, watch):
    page.goto(f"{base_url}/redoc", wait_until="domcontentloaded")
    summary = "Rank layout, schedule, simulated timeline and cost model for one scenario"
    page.get_by_role("heading", name=summary).wait_for(state="visible", timeout=30_000)
    assert any(url.endswith("redoc.standalone.js") for url in watch.requests)
