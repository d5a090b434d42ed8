"""The HTTP API answers only its own Host names (issue 13, item 9): a DNS-rebinding page
(evil.example re-resolved to 127.0.0.1) gets 400 and no data; the server's own names, IP
literals and configured names pass; websockets keep their own checks."""

import urllib.error
import urllib.request
import warnings

import pytest
from support import AUTH, TOKEN, ServerThread, get_json

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.api.hosts import HostRule
from app.main import create_app
from app.settings import Settings

pytestmark = pytest.mark.timeout(60)


def _client(tmp_path, **settings) -> TestClient:
    return TestClient(create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN,
                                          **settings)))  # fmt: skip


def _status(client: TestClient, host: str, path: str = "/api/runs") -> int:
    return client.get(path, headers={"Host": host}).status_code


def test_a_rebinding_host_gets_400_and_the_servers_own_names_pass(tmp_path):
    with _client(tmp_path, allowed_hosts=[]) as client:
        for path in ("/api/runs", "/", "/healthz", "/openapi.json"):
            response = client.get(path, headers={"Host": "evil.example:8000"})
            assert response.status_code == 400, path
            assert "MESHSCOPE_ALLOWED_HOSTS" in response.json()["detail"]
            assert "evil" not in response.text  # the refused value is not echoed
        for host in ("127.0.0.1:8000", "127.0.0.1", "localhost:9999", "[::1]:8000",
                     "10.1.2.3:8000", "LOCALHOST:8000"):  # fmt: skip
            assert _status(client, host) == 200, host
        for host in ("evil.example", "127.0.0.1.evil.example", "evil@127.0.0.1", "localhost/x",
                     "", "[::1", "testserver"):  # fmt: skip
            assert _status(client, host) == 400, host


def test_configured_names_wildcards_and_star(tmp_path):
    names = ["proxy.example", "*.corp.example"]
    with _client(tmp_path, host="0.0.0.0", allowed_hosts=names) as client:
        assert _status(client, "proxy.example:443") == 200
        assert _status(client, "a.corp.example") == 200
        assert _status(client, "corp.example") == 400
        assert _status(client, "evil.example") == 400
    with _client(tmp_path, host="head-node") as client:
        assert _status(client, "head-node:8000") == 200  # the bound host
    with _client(tmp_path, allowed_hosts=["*"]) as client:
        assert _status(client, "evil.example") == 200  # behind a proxy that checks Host


def test_the_defaults_hold_no_test_name_and_bad_patterns_are_refused(monkeypatch):
    monkeypatch.delenv("MESHSCOPE_ALLOWED_HOSTS", raising=False)
    rule = HostRule.from_settings(Settings())
    assert not rule.allows("testserver") and not rule.allows("evil.example")
    assert rule.allows("127.0.0.1:8000") and rule.allows("[::1]:1")
    for bad in (["evil.example:80"], ["a*.example"], ["http://x"], [""]):
        with pytest.raises(ValueError):
            Settings(allowed_hosts=bad)


def test_websockets_keep_their_own_checks(tmp_path):
    """A probe may reach the server under any name; its token is what lets it in."""
    with _client(tmp_path, allowed_hosts=[]) as client:
        headers = AUTH | {"Host": "head-node.cluster:8000"}
        with client.websocket_connect("/ws/ingest", headers=headers) as ws:
            ws.send_text('{"type": "nope"}')
            assert ws.receive_json()["type"] == "error"  # accepted, then spoke protocol


def test_a_real_server_refuses_a_foreign_host(tmp_path):
    app = create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN, allowed_hosts=[]))
    with ServerThread(app) as srv:
        assert get_json(srv.base, "/api/runs") is not None  # Host: 127.0.0.1:port
        request = urllib.request.Request(srv.base + "/api/runs", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400
