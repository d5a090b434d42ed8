"""whole_at: the ranks that make a step whole on a run's page. A run that may still report
waits for its whole world, even when only some ranks have reported yet (the ended case, a
log of rank 0 alone, is tests/browser/test_run_partial_log_page.py's)."""

import warnings

import pytest
from support import AUTH, TOKEN, hello, record_frame, records, run_info

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from fastapi.testclient import TestClient

pytestmark = pytest.mark.timeout(60)


def test_a_running_run_waits_for_its_whole_world(tmp_path):
    info = run_info("half", pp=2, steps=3)
    app = create_app(Settings(db=tmp_path / "m.sqlite3", ingest_token=TOKEN))
    with TestClient(app) as c, c.websocket_connect("/ws/ingest", headers=dict(AUTH)) as ws:
        ws.send_text(hello(info, 0))
        assert ws.receive_json()["type"] == "ack"
        ws.send_text(record_frame(records(info, 0)[0]))
        assert ws.receive_json()["type"] == "ack"
        run = c.get("/api/runs/half").json()
        assert run["status"] == "running"
        assert (run["world"], run["whole_at"]) == (2, 2)
