"""A page embedding a big view model is streamed around the cache's bytes (page_stream.py):
the page must read back exactly as the one-string page did, with nothing that closes its
<script> element, whatever slice a "<" or a multi-byte character falls on."""

import asyncio
import json

from fastapi.testclient import TestClient
from page_html import page_data

from app.api import page_stream, scenario_cache
from app.api.page_data import json_for_script, script_parts
from app.main import create_app
from app.settings import Settings


def test_a_streamed_page_is_the_one_string_page_slice_by_slice(monkeypatch):
    monkeypatch.setattr(page_stream, "SLICE_BYTES", 7)  # "<" and "名" fall across slices
    model = {"note": "</script><b>名" * 5, "values": [1.5, None]}
    raw = json.dumps(model, ensure_ascii=False, separators=(",", ":")).encode()
    data = {"page": "overview", "model": scenario_cache.ViewModel(model, raw), "errors": {}}
    before, body, after = script_parts(data)
    small = page_stream.Response(f"<html>{page_stream.PAGE_MARK}</html>", media_type="text/html")
    page = page_stream.streamed(small, before, body, after)
    assert "content-length" not in page.headers

    async def collect():
        return b"".join([piece async for piece in page.body_iterator]).decode()

    text = asyncio.run(collect())
    assert text == f"<html>{json_for_script(data)}</html>"
    inner = text.removeprefix("<html>").removesuffix("</html>")
    assert "<" not in inner and json.loads(inner)["model"] == model


def test_the_overview_of_a_big_model_is_streamed_and_embeds_the_api_answer(monkeypatch, tmp_path):
    monkeypatch.setattr(scenario_cache, "PARSE_WHOLE_BYTES", 0)  # every entry a ViewModel
    monkeypatch.setattr(page_stream, "SLICE_BYTES", 4096)  # this small model counts as big
    query = "schedule=interleaved&virtual_stages=2&pp=4&microbatches=8"
    app = create_app(Settings(db=tmp_path / "m.sqlite3", heavy_processes=0))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        api = client.get(f"/api/scenario?{query}").json()
        page = client.get(f"/?{query}&lang=zh")
    assert page.status_code == 200 and "content-length" not in page.headers  # streamed
    assert page.headers["content-type"].startswith("text/html")
    assert page_data(page.text)["model"] == api
    assert page.text.count("</script>") == page.text.count("<script")


def test_a_page_without_a_big_model_is_one_string_as_before(tmp_path):
    app = create_app(Settings(db=tmp_path / "m.sqlite3", heavy_processes=0))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page = client.get("/?pp=2&lang=en", headers={"Accept-Encoding": "identity"})
    assert page.status_code == 200 and int(page.headers["content-length"]) == len(page.content)
