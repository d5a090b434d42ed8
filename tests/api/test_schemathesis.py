"""Property-based fuzzing of the OpenAPI: no input may produce a server error."""

import tempfile
import warnings
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _db = Path(tempfile.mkdtemp(prefix="meshscope-fuzz-")) / "fuzz.sqlite3"
    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", create_app(Settings(ingest_token="t" * 32, db=_db))
    )


def _check(case):
    response = case.call(timeout=60)
    assert response.status_code < 500, response.text
    if case.method.upper() == "GET":
        assert response.status_code in (200, 422), case.as_curl_command()


@schema.include(path_regex="^/api/(scenario|flow|orders|trace)$").parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case):
    _check(case)


# Few: each plan searches thousands of configurations, and the conformance test
# (tests/reliability/test_openapi_conformance.py) checks this route's answers too.
@schema.include(path_regex="^/api/plan$").parametrize()
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_planner_never_errors(case):
    _check(case)


@schema.include(path_regex="^/api/(compare|sweep)$").parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_comparison_and_the_sweep_never_error(case):
    _check(case)
