"""/docs and /redoc load nothing from off the server: their bundles come from fastapi-offline."""

import gzip
import re

import pytest

from app.api import docs_offline
from app.api.assets import IMMUTABLE

TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def links(html):
    return re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html)


@pytest.mark.parametrize(("path", "count"), [("/docs", 3), ("/redoc", 2)])
def test_docs_pages_name_only_files_on_this_server(client, path, count):
    res = client.get(path)
    assert res.status_code == 200
    assert res.headers["content-type"].startswith("text/html")
    urls = links(res.text)
    assert len(urls) == count, urls
    assert "://" not in res.text and "fonts.googleapis" not in res.text
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert asset.headers["content-type"].startswith(TYPES[url[url.rindex(".") :]]), url
        assert asset.headers["cache-control"] == IMMUTABLE
        assert asset.content == docs_offline.bundle_bytes(url.rsplit("/", 1)[1])


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_load_this_servers_openapi(client, path):
    html = client.get(path).text
    spec = re.search(r"""(?:url: |spec-url=)["'](/[^"']+)["']""", html).group(1)
    assert spec == "/openapi.json"
    assert "/api/scenario" in client.get(spec).json()["paths"]


def test_redoc_is_the_packages_file_less_its_cdn_logo(client):
    version = docs_offline.bundle_version()
    served = client.get(docs_offline.bundle_url(version, "redoc.standalone.js")).content
    original = (docs_offline.bundle_dir() / "redoc.standalone.js").read_bytes()
    assert b"cdn.redoc.ly" in original and b"cdn.redoc.ly" not in served
    assert served.replace(b"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>", b"") == (
        original.replace(b"https://cdn.redoc.ly/redoc/logo-mini.svg", b"")
    )
    swagger = docs_offline.bundle_dir() / "swagger-ui-bundle.js"
    assert docs_offline.bundle_bytes("swagger-ui-bundle.js") == swagger.read_bytes()


def test_docs_bundles_are_gzipped_once_and_kept(client):
    url = docs_offline.bundle_url(docs_offline.bundle_version(), "swagger-ui-bundle.js")
    original = (docs_offline.bundle_dir() / "swagger-ui-bundle.js").read_bytes()
    with client.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as res:
        assert res.headers["content-encoding"] == "gzip"
        body = b"".join(res.iter_raw())
    assert gzip.decompress(body) == original and len(body) * 2 < len(original)
    assert "docs/swagger-ui-bundle.js" in client.app.state.gzipped._bytes


def test_only_the_shipped_version_and_files_are_served(client):
    version = docs_offline.bundle_version()
    assert client.get(docs_offline.bundle_url("0.0.0", "swagger-ui.css")).status_code == 404
    assert client.get(docs_offline.bundle_url(version, "core.py")).status_code == 404
    assert client.get(docs_offline.bundle_url(version, "..%2fcore.py")).status_code == 404
