"""Static files under the tree's hash, cached forever; gzip once for assets, per request else."""

import gzip
import json
import re
from pathlib import Path

import pytest

from app.api import assets, compression
from app.api.assets import IMMUTABLE, StaticTree

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
PAGES = ("/", "/flow", "/compare", "/trend", "/primer", "/plan", "/runs", "/runs/some-run")


def fetch(client, url, accept=None, **headers):
    """Status, headers and the body as sent, not decoded; accept=None sends no Accept-Encoding."""
    default = client.headers.pop("accept-encoding", None)  # httpx would offer gzip itself
    try:
        if accept:
            headers["Accept-Encoding"] = accept
        with client.stream("GET", url, headers=headers) as res:
            return res.status_code, res.headers, b"".join(res.iter_raw())
    finally:
        if default is not None:
            client.headers["accept-encoding"] = default


def digest_of(folder):
    return StaticTree.load(folder).digest


def test_the_tree_hash_changes_with_any_file_and_only_with_one(tmp_path):
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "a.js").write_text("export const a = 1;\n")
    (tmp_path / "app.css").write_text("body {}\n")
    first = digest_of(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{12}", first)
    assert digest_of(tmp_path) == first, "the same files, the same hash"
    (tmp_path / ".a.js.swp").write_text("editor junk")
    (tmp_path / "js" / "__pycache__").mkdir()
    (tmp_path / "js" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert digest_of(tmp_path) == first, "hidden files and caches are not served or hashed"

    (tmp_path / "js" / "a.js").write_text("export const a = 2;\n")
    changed = digest_of(tmp_path)
    (tmp_path / "js" / "a.js").rename(tmp_path / "js" / "b.js")
    renamed = digest_of(tmp_path)
    (tmp_path / "js" / "c.js").write_text("")
    added = digest_of(tmp_path)
    assert len({first, changed, renamed, added}) == 4


def test_path_and_bytes_cannot_trade_places_in_the_hash():
    assert assets.tree_hash({"a": b"bc"}) != assets.tree_hash({"ab": b"c"})


def test_a_template_naming_a_file_we_do_not_ship_fails_to_render():
    tree = StaticTree.load(STATIC)
    assert tree.url("js/flow.js") == f"/static/{tree.digest}/js/flow.js"
    with pytest.raises(KeyError):
        tree.url("js/missing.js")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_names_our_files_under_the_hash_and_they_are_immutable(client, path):
    from asset_budget import page_files

    prefix = client.app.state.static.prefix
    assert prefix == f"/static/{digest_of(STATIC)}"
    html = client.get(path).text
    named = re.findall(r'(?:src|href)="(/static/[^"]*)"', html)
    assert named and all(url.startswith(prefix + "/") for url in named), named
    # Each module and everything it imports by relative path resolves under the same prefix.
    files = page_files(html)
    assert any(f.suffix == ".js" for f in files) and any(f.suffix == ".css" for f in files)
    for file in files:
        status, headers, body = fetch(client, f"{prefix}/{file.relative_to(STATIC).as_posix()}")
        assert status == 200, file
        assert headers["cache-control"] == IMMUTABLE
        assert body == file.read_bytes()


def test_a_stale_hash_or_unknown_path_is_a_404_not_other_content(client):
    digest = client.app.state.static.digest
    for url in (
        "/static/000000000000/js/flow.js",
        f"/static/{digest}/js/missing.js",
        f"/static/{digest}",
        "/static/%2e%2e/pyproject.toml",
    ):
        assert client.get(url).status_code == 404, url


def test_the_bare_static_path_still_serves_but_must_revalidate(client):
    res = client.get("/static/js/flow.js")
    assert res.status_code == 200
    assert res.content == (STATIC / "js" / "flow.js").read_bytes()
    assert "javascript" in res.headers["content-type"]
    assert res.headers["cache-control"] == "no-cache"
    again = client.get("/static/js/flow.js", headers={"If-None-Match": res.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    stale = client.get("/static/js/flow.js", headers={"If-None-Match": 'W/"000000000000"'})
    assert stale.status_code == 200


@pytest.mark.parametrize("rel", ["js/flow.js", "css/app.css"])
def test_a_static_file_is_gzip_when_asked_and_identity_otherwise(client, rel):
    url, original = client.app.state.static.url(rel), (STATIC / rel).read_bytes()
    status, headers, body = fetch(client, url, "gzip, deflate, br")
    assert status == 200
    assert headers["content-encoding"] == "gzip"
    assert "accept-encoding" in headers["vary"].lower()
    assert gzip.decompress(body) == original
    assert len(body) < len(original)

    status, headers, body = fetch(client, url)
    assert status == 200 and "content-encoding" not in headers
    assert "accept-encoding" in headers["vary"].lower()
    assert body == original


def test_plotly_is_compressed_once_and_far_smaller(client, monkeypatch):
    calls = []
    real = gzip.compress
    monkeypatch.setattr(gzip, "compress", lambda data, **kw: calls.append(1) or real(data, **kw))
    url, original = client.app.state.plotly_url, assets.plotly_js_path().read_bytes()
    sizes = []
    for _ in range(3):
        status, headers, body = fetch(client, url, "gzip")
        assert status == 200 and headers["content-encoding"] == "gzip"
        assert headers["cache-control"] == IMMUTABLE
        sizes.append(len(body))
    assert len(calls) == 1, "compressed on the first request only"
    assert gzip.decompress(body) == original
    assert sizes[0] * 3 < len(original), (sizes[0], len(original))
    status, headers, body = fetch(client, url)
    assert "content-encoding" not in headers and body == original


@pytest.mark.parametrize("url", ["/api/scenario?dp=256&tp=8&pp=8", "/flow?dp=256&tp=8&pp=8"])
def test_pages_and_json_are_gzipped_per_request(client, url):
    status, headers, packed = fetch(client, url, "gzip")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert "accept-encoding" in headers["vary"].lower()
    status, headers, plain = fetch(client, url)
    assert status == 200 and "content-encoding" not in headers
    assert gzip.decompress(packed) == plain
    assert len(packed) * 4 < len(plain)


def test_small_responses_are_sent_as_they_are(client):
    status, headers, body = fetch(client, "/healthz", "gzip")
    assert len(body) < compression.MIN_BYTES
    assert "content-encoding" not in headers and json.loads(body) == {"status": "ok"}


def test_the_trace_download_still_arrives_whole_when_gzipped(client):
    status, headers, body = fetch(client, "/api/trace?pp=4&microbatches=4&f_time=1", "gzip")
    assert status == 200 and headers["content-encoding"] == "gzip"
    assert "attachment" in headers["content-disposition"]
    assert {"traceEvents", "displayTimeUnit"} <= set(json.loads(gzip.decompress(body)))


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        ("gzip", True),
        ("gzip, deflate, br, zstd", True),
        ("GZIP;q=0.5", True),
        ("deflate, *;q=0.1", True),
        ("br", False),
        ("identity", False),
        ("", False),
        ("gzip;q=0", False),
        ("gzip;q=0, *", False),
        ("*;q=0", False),
        ("gzip;q=oops", False),
    ],
)
def test_accept_encoding_is_read_with_its_quality_values(header, ok):
    assert compression.accepts_gzip(header) is ok
