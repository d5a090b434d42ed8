"""Property-based fuzzing of GET /api/export through its OpenAPI (every scenario field and
the format): no input may produce a server error, only a 200 or a 422."""

import tempfile
import warnings
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _db = Path(tempfile.mkdtemp(prefix="meshscope-export-fuzz-")) / "fuzz.sqlite3"
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(Settings(ingest_token="t" * 32, db=_db))
    )


@schema.include(path_regex="^/api/export$").parametrize()
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_export_never_errors(case):
    response = case.call(timeout=60)
    assert response.status_code < 500, response.text
    if case.method.upper() != "GET":
        return  # schemathesis also tries other methods: 405, as the other routes answer
    assert response.status_code in (200, 422), case.as_curl_command()
    if response.status_code == 200:
        body = response.json()
        assert body["ok"] == (body["text"] != "") and body["version"]
