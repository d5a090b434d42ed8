"""Property-based fuzzing of /api/primer's OpenAPI: no input may produce a server error."""

import tempfile
import warnings
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _db = Path(tempfile.mkdtemp(prefix="meshscope-primer-fuzz-")) / "fuzz.sqlite3"
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(Settings(ingest_token="t" * 32, db=_db))
    )


@schema.include(path_regex="^/api/primer$").parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_primer_never_errors(case):
    response = case.call(timeout=60)
    assert response.status_code < 500, response.text
    if case.method.upper() == "GET":
        assert response.status_code in (200, 422), case.as_curl_command()
