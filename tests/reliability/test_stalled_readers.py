"""Issue 26 item 1: two clients that never read must not hold both heavy slots. A streamed
answer whose send makes no progress for heavy_stall_s is ended and its slot freed, and one
client address holds at most its share of the slots (heavy_client_slots)."""

import socket
import urllib.error
import urllib.request
import warnings

import pytest
from support import ServerThread, wait_until

from app.api.limits import Busy
from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(90)
# ~5 MB of trace: far more than a 4 KB receive window and the server's send buffers hold.
BIG_TRACE = "/api/trace?pp=16&microbatches=256&f_time=1&b_time=1"
TINY = "/api/flow?pp=4&f_time=1"


def _never_reading(port: int, source: str) -> socket.socket:
    """A client at ``source`` (another loopback address: another client) asking for the big
    trace and never reading a byte of it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {BIG_TRACE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return sock


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=45) as res:
            res.read()
            return res.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_two_clients_that_never_read_lose_their_slots_and_others_are_served(tmp_path):
    settings = Settings(
        db=tmp_path / "m.sqlite3", ingest_token="t" * 32, heavy_slots=2, heavy_queue=4,
        heavy_wait_s=30, heavy_stall_s=1,
    )  # fmt: skip
    app = create_app(settings)
    limiter = app.state.heavy
    sockets = []
    with ServerThread(app) as server:
        try:
            sockets = [_never_reading(server.port, f"127.0.0.{i}") for i in (2, 3)]
            assert wait_until(lambda: limiter.running == 2, 20)  # both slots held
            # Before the fix this waited its 30 s and got 429, for as long as they stayed.
            assert _status(server.base + TINY) == 200
            assert limiter.stalled == 2 and limiter.refused == 0
            assert wait_until(lambda: limiter.running == 0, 5)
            for sock in sockets:  # the server closed them: their reads reach the end
                sock.settimeout(5)
                while sock.recv(1 << 16):
                    pass
        finally:
            for sock in sockets:
                sock.close()


def test_one_address_holds_at_most_its_share_of_the_slots(tmp_path):
    settings = Settings(
        db=tmp_path / "m.sqlite3", ingest_token="t" * 32, heavy_slots=2, heavy_queue=4,
        heavy_wait_s=0.3, heavy_client_slots=1,
    )  # fmt: skip
    with TestClient(create_app(settings)) as client:
        limiter = client.app.state.heavy
        first = client.portal.call(limiter.acquire, "10.0.0.1")
        try:
            # A slot is free, but not for this address: it waits its share, then 429.
            with pytest.raises(Busy):
                client.portal.call(limiter.acquire, "10.0.0.1")
            other = client.portal.call(limiter.acquire, "10.0.0.2")  # another client gets it
            assert limiter.running == 2 and limiter.held_by("10.0.0.1") == 1
            client.portal.call(limiter.release, other)
        finally:
            client.portal.call(limiter.release, first)
        assert limiter.running == 0 and limiter.held_by("10.0.0.1") == 0


def test_a_queued_request_of_a_full_address_lets_other_clients_pass(tmp_path):
    # 10.0.0.1 holds its share and queues one more; 10.0.0.2, queued after it, is served
    # first because a slot is free and 10.0.0.1 is waiting only for its own share.
    settings = Settings(
        db=tmp_path / "m.sqlite3", ingest_token="t" * 32, heavy_slots=2, heavy_queue=4,
        heavy_wait_s=5, heavy_client_slots=1,
    )  # fmt: skip
    with TestClient(create_app(settings)) as client:
        limiter = client.app.state.heavy
        held = client.portal.call(limiter.acquire, "10.0.0.1")
        second = client.portal.start_task_soon(limiter.acquire, "10.0.0.1")
        other = client.portal.call(limiter.acquire, "10.0.0.2")
        assert limiter.held_by("10.0.0.2") == 1
        assert not second.done(), second.exception()
        client.portal.call(limiter.release, held)
        client.portal.call(limiter.release, second.result(timeout=5))
        client.portal.call(limiter.release, other)
        assert limiter.running == 0
