"""The sync routes' thread pool is sized from settings when the server starts."""

import warnings

import pytest
from anyio import to_thread

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings


@pytest.mark.parametrize("threads", [1, 3, 16])
def test_the_server_runs_sync_routes_on_compute_threads(tmp_path, threads):
    settings = Settings(db=tmp_path / "t.sqlite3", ingest_token="t" * 32, compute_threads=threads)
    with TestClient(create_app(settings)) as client:
        tokens = client.portal.call(lambda: to_thread.current_default_thread_limiter().total_tokens)
        assert tokens == threads
        assert client.get("/api/scenario").status_code == 200


def test_a_thread_count_below_one_is_refused():
    with pytest.raises(ValueError, match="compute_threads"):
        Settings(compute_threads=0)


def test_the_gil_switch_interval_holds_while_the_server_runs_and_is_put_back(tmp_path):
    import sys

    before = sys.getswitchinterval()
    settings = Settings(db=tmp_path / "t.sqlite3", ingest_token="t" * 32,
                        gil_switch_interval_s=0.002)  # fmt: skip
    with TestClient(create_app(settings)) as client:
        assert client.portal.call(sys.getswitchinterval) == pytest.approx(0.002)
    assert sys.getswitchinterval() == pytest.approx(before)
    with pytest.raises(ValueError, match="gil_switch_interval_s"):
        Settings(gil_switch_interval_s=0)
