"""Issue 26 item 12: MESHSCOPE_READ_TOKEN. Set, the run API, the run pages, /metrics' run
series and the viewer sockets answer only a client that shows it (Bearer header or the
cookie /login sets); unset, they stay public."""

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect

from app.api.read_access import COOKIE, cookie_value
from app.main import create_app
from app.settings import Settings

READ = "read-token-for-tests-0123456789"
BEARER = {"Authorization": f"Bearer {READ}"}
GUARDED = ["/api/runs", "/api/runs/r1", "/api/runs/r1/steps", "/api/runs/r1/analysis?step=0"]


@pytest.fixture
def client(tmp_path):
    app = create_app(Settings(db=tmp_path / "a.sqlite3", read_token=READ))
    with TestClient(app, follow_redirects=False) as c:
        yield c


@pytest.mark.parametrize("path", GUARDED)
def test_the_run_api_needs_the_token(client, path):
    r = client.get(path)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert (
        client.get(path, headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code
        == 401
    )
    assert client.get(path, headers=BEARER).status_code != 401


def test_run_pages_send_a_browser_to_the_login_page_and_back(client):
    r = client.get("/runs/r1?step=3")
    assert r.status_code == 303 and r.headers["location"] == "/login?next=%2Fruns%2Fr1%3Fstep%3D3"
    assert client.get("/runs").status_code == 303
    page = client.get(r.headers["location"])
    assert page.status_code == 200 and 'name="token"' in page.text
    wrong = client.post("/login", data={"token": "nope", "next": "/runs/r1"})
    assert wrong.status_code == 401 and COOKIE not in wrong.cookies
    right = client.post("/login", data={"token": READ, "next": "/runs/r1?step=3"})
    assert right.status_code == 303 and right.headers["location"] == "/runs/r1?step=3"
    assert right.cookies[COOKIE] == cookie_value(READ) != READ  # never the token itself
    assert "httponly" in right.headers["set-cookie"].lower()
    client.cookies.set(COOKIE, right.cookies[COOKIE])
    assert client.get("/runs").status_code == 200
    assert client.get("/runs/r1").status_code == 404  # past the guard: an unknown run
    assert client.get("/api/runs").status_code == 200  # the cookie opens the API too


def test_login_never_sends_the_browser_to_another_site(client):
    for target in ["//evil.example", "https://evil.example/", "/\\evil.example"]:
        r = client.post("/login", data={"token": READ, "next": target})
        assert r.headers["location"] == "/runs"


def test_metrics_hide_run_series_without_the_token(client):
    public = client.get("/metrics").text
    assert "meshscope_viewers" in public and "meshscope_run_" not in public
    assert "meshscope_run_status" in client.get("/metrics", headers=BEARER).text


def test_viewer_sockets_need_the_token(client):
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/ws/runs/r1"):
        pass
    with client.websocket_connect("/ws/runs/r1", headers=dict(BEARER)) as ws:
        assert ws.receive_json()[0]["type"] == "hello"
    client.cookies.set(COOKIE, cookie_value(READ))
    with client.websocket_connect("/ws/runs/r1") as ws:
        assert ws.receive_json()[0]["type"] == "hello"


def test_without_a_read_token_runs_stay_public(tmp_path):
    with TestClient(create_app(Settings(db=tmp_path / "b.sqlite3"))) as c:
        assert c.get("/api/runs").status_code == 200
        assert c.get("/runs").status_code == 200
        assert "meshscope_run_status" in c.get("/metrics").text


def test_a_read_token_with_whitespace_is_refused_at_start():
    with pytest.raises(ValidationError) as exc:
        Settings(read_token=READ + " ")
    assert "read_token" in str(exc.value) and READ not in str(exc.value)
