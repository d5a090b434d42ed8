"""`meshscope import-trace --server`: the records travel as a probe's spool through
`meshscope upload`'s own code (gpu_probe.upload) to a running server's ingest."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "live"))
from support import TOKEN, ServerThread, get_json, wait_until  # noqa: E402

from app.importers.import_trace import main  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402

pytestmark = pytest.mark.timeout(120)
GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"


def test_an_import_sent_to_a_server_is_stored_and_served(tmp_path, capsys):
    app = create_app(Settings(db=tmp_path / "live.sqlite3", ingest_token=TOKEN))
    with ServerThread(app) as server:
        url = server.ws + "/ws/ingest"
        args = [str(GLOO), "--run", "sent", "--server", url, "--token", TOKEN]
        assert main(args) == 0
        assert "layout dp=2 tp=1 pp=2" in capsys.readouterr().out
        steps = get_json(server.base, "/api/runs/sent/steps")["records"]
        assert sorted((r["rank"], r["step"]) for r in steps) == [
            (rank, step) for rank in range(4) for step in (0, 1, 2)
        ]
        # Every rank said it ended: the run finishes instead of waiting for more records.
        assert wait_until(lambda: get_json(server.base, "/api/runs/sent")["status"] == "done")
        assert main(args) == 0  # again: the server's cursor says everything is stored
        assert len(get_json(server.base, "/api/runs/sent/steps")["records"]) == 12
